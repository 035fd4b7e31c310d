from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.CreateModel(
            name="CoursepackRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("course_id", models.CharField(db_index=True, max_length=255)),
                ("trigger", models.CharField(max_length=32)),
                ("status", models.CharField(max_length=16)),
                ("build_exit", models.IntegerField(null=True)),
                ("publish_exit", models.IntegerField(null=True)),
                ("counts", models.JSONField(default=dict)),
                ("failed_blocks", models.JSONField(default=list)),
                ("message", models.TextField(blank=True)),
                ("attempts", models.PositiveIntegerField(default=1)),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField()),
            ],
            options={"ordering": ["-finished_at"]},
        ),
    ]
