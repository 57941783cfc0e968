"""The project's tests, mirroring the package: ``tests/<room>/test_<module>.py``.

A package, room by room, so that two rooms may hold test files of the same name
(``tests/test_report.py`` for ``dlhack.report``, ``tests/grade/test_report.py`` for
``dlhack.grade.report``); what every test needs is in ``tests/support.py``.
"""
