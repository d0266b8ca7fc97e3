"""The SDK's exception classes, with the same hierarchy, status codes and message format.

`APIStatusError.message` reads `Error code: <status> - <parsed JSON body>` as the SDK builds it from
a JSON error response. The SDK's `request`/`response` are httpx objects; here they are small
stand-ins with the attributes callers read (`method`, `url`; `status_code`, `headers`, `text`).
"""
from __future__ import annotations

import json


class _Request:
    def __init__(self, method: str, url: str) -> None:
        self.method = method
        self.url = url


class _Response:
    def __init__(self, status_code: int, request: _Request, body: object) -> None:
        self.status_code = status_code
        self.request = request
        self.headers = {"content-type": "application/json"}
        self.text = json.dumps(body)


class TinkerError(Exception):
    """Base exception for all Tinker-related errors."""


class APIError(TinkerError):
    def __init__(self, message: str, request: _Request, *, body: object | None) -> None:
        super().__init__(message)
        self.request = request
        self.message = message
        self.body = body


class APIResponseValidationError(APIError):
    pass


class APIStatusError(APIError):
    def __init__(self, message: str, response: _Response, body: object | None) -> None:
        super().__init__(message, response.request, body=body)
        self.response = response
        self.status_code = response.status_code


class APIConnectionError(APIError):
    def __init__(self, request: _Request, message: str = "Connection error.") -> None:
        super().__init__(message, request, body=None)


class APITimeoutError(APIConnectionError):
    def __init__(self, request: _Request) -> None:
        super().__init__(request=request, message="Request timed out.")


class BadRequestError(APIStatusError):
    status_code = 400


class AuthenticationError(APIStatusError):
    status_code = 401


class PermissionDeniedError(APIStatusError):
    status_code = 403


class NotFoundError(APIStatusError):
    status_code = 404


class ConflictError(APIStatusError):
    status_code = 409


class UnprocessableEntityError(APIStatusError):
    status_code = 422


class RateLimitError(APIStatusError):
    status_code = 429


class InternalServerError(APIStatusError):
    pass


class RequestFailedError(TinkerError):
    def __init__(self, message: str, request_id: str, category: str) -> None:
        super().__init__(message)
        self.message = message
        self.request_id = request_id
        self.category = category


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error(status: int, detail: str, method: str = "GET", path: str = "/") -> APIStatusError:
    """The exception the SDK raises for a JSON error response `{"detail": detail}` with `status`."""
    body = {"detail": detail}
    response = _Response(status, _Request(method, path), body)
    cls = _BY_STATUS.get(status, InternalServerError if status >= 500 else APIStatusError)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


def connection_error(method: str = "GET", path: str = "/") -> APIConnectionError:
    return APIConnectionError(request=_Request(method, path))
