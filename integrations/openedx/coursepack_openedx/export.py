"""The platform side: exporting a course to OLX and listing courses. Imported lazily, so the app
loads (and is tested) without edx-platform."""

import os


def export_with_platform(course_key, folder):
    """Writes the published course as Studio's OLX export into `folder`/course."""
    from xmodule.contentstore.django import contentstore  # edx-platform
    from xmodule.modulestore.django import modulestore
    from xmodule.modulestore.xml_exporter import export_course_to_xml

    export_course_to_xml(modulestore(), contentstore(), course_key, folder, "course")
    return os.path.join(folder, "course")


def list_platform_courses():
    from openedx.core.djangoapps.content.course_overviews.models import CourseOverview  # edx-platform

    return [overview.id for overview in CourseOverview.objects.all()]
