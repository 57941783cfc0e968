"""nbgrader settings for instructors who grade with nbgrader itself (`nbgrader autograde`).

Solutions are the source folder and labs the release folder. A lab's check cell runs several
short MPI jobs through `dlhack.grade.check`, so a cell may take longer than nbgrader's default
30 s on a busy grading machine.
"""
c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "labs"
c.Execute.timeout = 180
