"""A toy fourth task family that lives only in the test tree: it proves a family arrives by registration alone."""
