"""Exercises the matrixobject S3 handler with boto3.

Run by TestBoto3 with S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY set.
Every check asserts; the last line printed is "boto3 ok".
"""

import hashlib
import os
import random

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["S3_ENDPOINT"]
MIB = 1024 * 1024


def client(secret):
    return boto3.client(
        "s3",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id=os.environ["S3_ACCESS_KEY"],
        aws_secret_access_key=secret,
        config=Config(s3={"addressing_style": "path"}, signature_version="s3v4",
                      retries={"max_attempts": 1}),
    )


def expect_error(fn, code, status):
    try:
        fn()
    except ClientError as e:
        got = (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
        assert got == (code, status), f"expected {code} {status}, got {got}"
        return
    raise AssertionError(f"expected {code} {status}, got success")


def body_of(resp):
    return resp["Body"].read()


def main():
    print("boto3 version", boto3.__version__, "botocore", botocore.__version__)
    s3 = client(os.environ["S3_SECRET_KEY"])
    rnd = random.Random(7)

    # Buckets.
    s3.create_bucket(Bucket="py-bucket")
    expect_error(lambda: s3.create_bucket(Bucket="py-bucket"), "BucketAlreadyOwnedByYou", 409)
    s3.create_bucket(Bucket="py-other")
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert names == ["py-bucket", "py-other"], names
    s3.head_bucket(Bucket="py-bucket")
    s3.delete_bucket(Bucket="py-other")
    expect_error(lambda: s3.head_bucket(Bucket="py-other"), "404", 404)
    print("buckets ok")

    # Put, get, head, with metadata.
    small = b"hello from boto3"
    put = s3.put_object(Bucket="py-bucket", Key="dir/small.txt", Body=small,
                        ContentType="text/plain", Metadata={"origin": "boto3"})
    assert put["ETag"] == '"%s"' % hashlib.md5(small).hexdigest(), put["ETag"]
    got = s3.get_object(Bucket="py-bucket", Key="dir/small.txt")
    assert body_of(got) == small
    assert got["ContentType"] == "text/plain"
    assert got["Metadata"] == {"origin": "boto3"}, got["Metadata"]
    head = s3.head_object(Bucket="py-bucket", Key="dir/small.txt")
    assert head["ContentLength"] == len(small)
    big = rnd.randbytes(2 * MIB + 77)
    s3.put_object(Bucket="py-bucket", Key="dir/big.bin", Body=big)
    odd = "odd key/spaces and+plus/ünï~"
    s3.put_object(Bucket="py-bucket", Key=odd, Body=b"odd")
    assert body_of(s3.get_object(Bucket="py-bucket", Key=odd)) == b"odd"
    expect_error(lambda: s3.get_object(Bucket="py-bucket", Key="missing"), "NoSuchKey", 404)
    expect_error(lambda: s3.get_object(Bucket="py-nobucket", Key="k"), "NoSuchBucket", 404)
    print("objects ok")

    # Range reads.
    r = s3.get_object(Bucket="py-bucket", Key="dir/big.bin", Range="bytes=1000-1999")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert body_of(r) == big[1000:2000]
    assert r["ContentRange"] == "bytes 1000-1999/%d" % len(big), r["ContentRange"]
    assert body_of(s3.get_object(Bucket="py-bucket", Key="dir/big.bin", Range="bytes=-10")) == big[-10:]
    assert body_of(s3.get_object(Bucket="py-bucket", Key="dir/big.bin", Range="bytes=%d-" % (len(big) - 5))) == big[-5:]
    expect_error(lambda: s3.get_object(Bucket="py-bucket", Key="dir/small.txt", Range="bytes=500-600"), "InvalidRange", 416)
    print("ranges ok")

    # ListObjectsV2 (boto3 asks for encoding-type=url and decodes).
    for i in range(5):
        s3.put_object(Bucket="py-bucket", Key="list/%02d" % i, Body=b"x")
    s3.put_object(Bucket="py-bucket", Key="list/sub/deep", Body=b"x")
    keys, pages = [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket="py-bucket", Prefix="list/", PaginationConfig={"PageSize": 2}):
        pages += 1
        keys += [o["Key"] for o in page.get("Contents", [])]
    assert pages == 3, pages
    assert keys == ["list/00", "list/01", "list/02", "list/03", "list/04", "list/sub/deep"], keys
    res = s3.list_objects_v2(Bucket="py-bucket", Delimiter="/")
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["dir/", "list/", "odd key/"], res["CommonPrefixes"]
    res = s3.list_objects_v2(Bucket="py-bucket", Prefix="list/", Delimiter="/", StartAfter="list/02")
    assert [o["Key"] for o in res["Contents"]] == ["list/03", "list/04"]
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["list/sub/"]
    res = s3.list_objects_v2(Bucket="py-bucket", Prefix="odd key/")
    assert [o["Key"] for o in res["Contents"]] == [odd], res["Contents"]
    print("list ok")

    # Multipart: three parts, the first two at S3's 5 MiB minimum.
    parts = [rnd.randbytes(5 * MIB), rnd.randbytes(5 * MIB), rnd.randbytes(4321)]
    up = s3.create_multipart_upload(Bucket="py-bucket", Key="mp/obj", ContentType="application/x-mp")
    uid = up["UploadId"]
    done = []
    for i, p in enumerate(parts, start=1):
        r = s3.upload_part(Bucket="py-bucket", Key="mp/obj", UploadId=uid, PartNumber=i, Body=p)
        assert r["ETag"] == '"%s"' % hashlib.md5(p).hexdigest()
        done.append({"PartNumber": i, "ETag": r["ETag"]})
    listed = s3.list_parts(Bucket="py-bucket", Key="mp/obj", UploadId=uid)
    assert [p["PartNumber"] for p in listed["Parts"]] == [1, 2, 3]
    expect_error(lambda: s3.complete_multipart_upload(Bucket="py-bucket", Key="mp/obj", UploadId=uid,
                                                      MultipartUpload={"Parts": [done[1], done[0], done[2]]}),
                 "InvalidPartOrder", 400)
    expect_error(lambda: s3.complete_multipart_upload(Bucket="py-bucket", Key="mp/obj", UploadId=uid,
                                                      MultipartUpload={"Parts": [done[0], {"PartNumber": 2, "ETag": done[0]["ETag"]}, done[2]]}),
                 "InvalidPart", 400)
    res = s3.complete_multipart_upload(Bucket="py-bucket", Key="mp/obj", UploadId=uid, MultipartUpload={"Parts": done})
    want = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-3"
    assert res["ETag"] == '"%s"' % want, (res["ETag"], want)
    print("multipart etag ok")
    whole = b"".join(parts)
    r = s3.get_object(Bucket="py-bucket", Key="mp/obj")
    assert body_of(r) == whole
    assert r["ETag"] == '"%s"' % want
    assert r["ContentType"] == "application/x-mp"
    lo, hi = 5 * MIB - 3, 10 * MIB + 2
    r = s3.get_object(Bucket="py-bucket", Key="mp/obj", Range="bytes=%d-%d" % (lo, hi))
    assert body_of(r) == whole[lo:hi + 1]
    expect_error(lambda: s3.upload_part(Bucket="py-bucket", Key="mp/obj", UploadId=uid, PartNumber=1, Body=b"x"),
                 "NoSuchUpload", 404)
    # Too-small parts are refused at completion; abort ends the upload.
    up = s3.create_multipart_upload(Bucket="py-bucket", Key="mp/small")
    small_done = []
    for i in (1, 2):
        r = s3.upload_part(Bucket="py-bucket", Key="mp/small", UploadId=up["UploadId"], PartNumber=i, Body=b"tiny")
        small_done.append({"PartNumber": i, "ETag": r["ETag"]})
    expect_error(lambda: s3.complete_multipart_upload(Bucket="py-bucket", Key="mp/small", UploadId=up["UploadId"],
                                                      MultipartUpload={"Parts": small_done}),
                 "EntityTooSmall", 400)
    uploads = s3.list_multipart_uploads(Bucket="py-bucket")["Uploads"]
    assert [u["UploadId"] for u in uploads] == [up["UploadId"]]
    s3.abort_multipart_upload(Bucket="py-bucket", Key="mp/small", UploadId=up["UploadId"])
    expect_error(lambda: s3.abort_multipart_upload(Bucket="py-bucket", Key="mp/small", UploadId=up["UploadId"]),
                 "NoSuchUpload", 404)
    print("multipart ok")

    # A wrong secret is refused, and changes nothing.
    bad = client("wrong-secret")
    expect_error(lambda: bad.get_object(Bucket="py-bucket", Key="dir/small.txt"), "SignatureDoesNotMatch", 403)
    expect_error(lambda: bad.put_object(Bucket="py-bucket", Key="dir/small.txt", Body=b"overwritten"),
                 "SignatureDoesNotMatch", 403)
    assert body_of(s3.get_object(Bucket="py-bucket", Key="dir/small.txt")) == small
    print("wrong secret rejected: SignatureDoesNotMatch 403")

    # Presigned GET.
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "py-bucket", "Key": "dir/small.txt"}, ExpiresIn=60)
    import urllib.request
    with urllib.request.urlopen(url) as resp:
        assert resp.read() == small
    print("presigned ok")

    # Deletes.
    expect_error(lambda: s3.delete_bucket(Bucket="py-bucket"), "BucketNotEmpty", 409)
    s3.delete_object(Bucket="py-bucket", Key="dir/small.txt")
    expect_error(lambda: s3.head_object(Bucket="py-bucket", Key="dir/small.txt"), "404", 404)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="py-bucket")["Contents"]]
    res = s3.delete_objects(Bucket="py-bucket", Delete={"Objects": [{"Key": k} for k in keys]})
    assert len(res["Deleted"]) == len(keys), res
    s3.delete_bucket(Bucket="py-bucket")
    expect_error(lambda: s3.delete_bucket(Bucket="py-bucket"), "NoSuchBucket", 404)
    print("deletes ok")
    print("boto3 ok")


if __name__ == "__main__":
    main()
