"""Each task family's board code: its verifier steps, row, content digest, viewer, and where it has them its
re-judge, ``overall`` row and board sections. The generic board (``leaderboard/``) reaches these modules only through
the targets a family declares (:data:`privasis_bench.tasks.family.FAMILIES`), never by name.

* :mod:`.privasis` (with :mod:`.privasis_row`, :mod:`.privasis_board`): the Privasis-Sanitization protocol;
* :mod:`.tab`: TAB's span measures; :mod:`.replacement` (with :mod:`.replacement_board`): replacement quality;
  both share :mod:`.spans` and :mod:`.span_viewer`.
"""
