class Error(Exception):
    pass


class UsageError(Error):
    pass


class CommError(Error):
    pass
