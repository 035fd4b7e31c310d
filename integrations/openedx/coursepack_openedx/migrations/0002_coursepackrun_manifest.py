from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("coursepack_openedx", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="coursepackrun",
            name="manifest",
            field=models.CharField(blank=True, default="", max_length=1024),
        ),
    ]
