"""The command plugin's HTTP/1.1 reply parsing, on replies as they arrive:
whole, cut anywhere, chunked, closing, and with header names in any case."""

import pytest

from feast_temporalstore_command._http import TransportError, parse_response

BODY = b"\x82\xa6status\x83\xa2ok\xc3"


def reply(*headers: bytes, body: bytes = BODY, status: bytes = b"200 OK") -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


CASES = [
    # (reply, status, body, keep-alive)
    (reply(b"Content-Length: %d" % len(BODY), b"Content-Type: application/msgpack", b"Date: x"), 200, BODY, True),
    (reply(b"Content-Length: %d" % len(BODY), b"Connection: close"), 200, BODY, False),
    (reply(b"Content-Length: %d" % len(BODY), b"connection: Close"), 200, BODY, False),
    (reply(b"content-length: %d" % len(BODY)), 200, BODY, True),
    (reply(b"Content-Length: 0", body=b""), 200, b"", True),
    (reply(b"Content-Length: %d" % len(BODY), status=b"400 Bad Request"), 400, BODY, True),
    (reply(b"Content-Length: 99", b"Transfer-Encoding: chunked", body=b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), 200, b"abcde", True),
]


@pytest.mark.parametrize("raw,status,body,keep", CASES)
def test_parse_response(raw, status, body, keep):
    for buf in (raw, bytearray(raw)):
        assert parse_response(buf) == (status, body, keep, len(raw))
    # The next reply's bytes behind it are left for the next parse.
    assert parse_response(raw + b"HTTP/1.1 200")[3] == len(raw)
    # Every cut short of the whole reply waits for more.
    for n in range(len(raw)):
        assert parse_response(raw[:n]) is None


@pytest.mark.parametrize("raw", [b"garbage\r\n\r\n", reply(b"Content-Length: x1"), reply(b"Content-Length: -1"),
                                 reply(b"Transfer-Encoding: chunked", body=b"zz\r\nabc\r\n0\r\n\r\n")])
def test_bad_reply(raw):
    with pytest.raises(TransportError):
        parse_response(raw)
