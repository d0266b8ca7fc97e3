class Error(Exception):
    pass


class UsageError(Error):
    pass
