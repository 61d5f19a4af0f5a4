"""A run's settings: the typed schemas (``schemas``), the checks no type can express
(``checks``, ``option_checks``), composing a config from ``conf/`` and overrides
(``compose``), and a saved run's config read back (``saved``).

It imports no torch, so ``asyncrl --help`` and a refused command line stay quick.
"""
