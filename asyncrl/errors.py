"""The one exception type that means "the user asked for something we refuse"."""


class UserError(Exception):
    """A mistake in what the user asked for: reported as one line, never as a traceback."""
