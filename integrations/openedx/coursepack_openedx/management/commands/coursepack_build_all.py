from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Build and publish the offline bundles of every course the platform has."

    def add_arguments(self, parser):
        parser.add_argument("--queue", action="store_true", help="queue Celery tasks instead of building here")

    def handle(self, *args, **options):
        call_command("coursepack_build", all=True, queue=options["queue"], stdout=self.stdout)
