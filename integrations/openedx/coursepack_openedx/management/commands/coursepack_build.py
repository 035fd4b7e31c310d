from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import import_string

from ...conf import setting
from ...tasks import build_course


class Command(BaseCommand):
    help = "Build and publish the offline bundles of one course, or of every course with --all."

    def add_arguments(self, parser):
        parser.add_argument("course_ids", nargs="*", help="course-v1:ORG+NUM+RUN")
        parser.add_argument("--all", action="store_true", help="every course the platform has")
        parser.add_argument("--queue", action="store_true", help="queue Celery tasks instead of building here")

    def handle(self, *args, **options):
        course_ids = list(options["course_ids"])
        if options["all"]:
            course_ids += [str(key) for key in import_string(setting("COURSE_LISTER"))()]
        if not course_ids:
            raise CommandError("name a course id, or pass --all")
        failed = 0
        for course_id in course_ids:
            if options["queue"]:
                build_course.delay(course_id, "manual")
                self.stdout.write(f"{course_id}: queued")
                continue
            result = build_course.apply(args=[course_id, "manual"]).get()
            self.stdout.write(f"{course_id}: {result['status']}")
            failed += result["status"] == "failed"
        if failed:
            raise CommandError(f"{failed} of {len(course_ids)} courses failed; see the log and the admin")
