import ArgumentParser

/// The course export that `build` and `inspect` read: both accept the same three forms.
struct CourseSource: ParsableArguments {
    @Argument(help: "Course export: the folder holding course.xml, its parent, or a .tar.gz from Studio.")
    var course: String
}
