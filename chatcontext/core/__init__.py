"""The functional core of the Build Context stage: pure functions over values, no Django and no
I/O (the import contract in pyproject.toml holds the package to that). The shell around it
(``chatcontext.pipeline``, the loaders, the snapshot capture) reads and writes."""
