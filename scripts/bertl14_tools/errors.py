"""Errors that reach the user as one line (no traceback): say what is wrong and what to do next."""


class UserError(Exception):
    """A problem with the user's input or environment, printed as `bertl14 CMD: error: <message>`."""
