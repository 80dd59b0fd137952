"""A toy fourth task family that lives only in the test tree (issue 49): registered with one line, it proves a family arrives without an edit to a generic module."""
