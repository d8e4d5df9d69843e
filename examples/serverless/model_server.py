"""A small model server for a serverless worker: standard library only, so any image with Python runs it.

It answers a prompt with a deterministic reply, and only for requests the route signed for this worker: the
autoscaler signs `{"url": <worker url>}` (JSON, indent 4) with its key, RSA PKCS#1 v1.5 over SHA-256, and publishes
the key at `$REPORT_ADDR/pubkey/`. Finished requests are reported back (`/delete_requests/`), so the autoscaler
sees the load leave.
"""
import base64
import hashlib
import hmac
import json
import os
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(os.environ.get("WORKER_PORT", "8000"))
REPORT_ADDR = os.environ.get("REPORT_ADDR", "https://run.vast.ai").rstrip("/")
# Where the service reaches this worker: its public address and the outside port of its own.
MY_URL = "http://%s:%s" % (os.environ.get("PUBLIC_IPADDR", "127.0.0.1"), os.environ.get("VAST_TCP_PORT_%d" % PORT, str(PORT)))
WORKER_ID = int(os.environ.get("CONTAINER_ID", "0"))
MTOKEN = os.environ.get("CONTAINER_API_KEY", "")
VERSION = os.environ.get("MODEL_VERSION", "1")
# DigestInfo of SHA-256, which PKCS#1 v1.5 puts before the digest.
SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def der(data, at):
    """One DER element at `at`: (its contents, where the next one starts)."""
    length = data[at + 1]
    start = at + 2
    if length & 0x80:
        size = length & 0x7F
        length = int.from_bytes(data[start:start + size], "big")
        start += size
    return data[start:start + length], start + length


def public_key(pem):
    """(n, e) of an RSA public key in SubjectPublicKeyInfo PEM."""
    body = base64.b64decode("".join(line for line in pem.splitlines() if line and not line.startswith("-----")))
    info, _ = der(body, 0)
    _, after_algorithm = der(info, 0)
    bits, _ = der(info, after_algorithm)
    rsa, _ = der(bits, 1)  # past the unused-bits byte
    n, after_n = der(rsa, 0)
    e, _ = der(rsa, after_n)
    return int.from_bytes(n, "big"), int.from_bytes(e, "big")


def signed_for_me(key, auth):
    """Whether the route signed this request for this worker's own URL."""
    if auth.get("url") != MY_URL:
        return False
    n, e = key
    size = (n.bit_length() + 7) // 8
    signature = base64.b64decode(auth.get("signature", ""))
    if len(signature) != size:
        return False
    block = pow(int.from_bytes(signature, "big"), e, n).to_bytes(size, "big")
    digest = hashlib.sha256(json.dumps({"url": MY_URL}, indent=4, sort_keys=True).encode()).digest()
    wanted = b"\x00\x01" + b"\xff" * (size - 3 - len(SHA256_INFO) - len(digest)) + b"\x00" + SHA256_INFO + digest
    return hmac.compare_digest(block, wanted)


def post(path, body):
    request = urllib.request.Request(REPORT_ADDR + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()


def fetch_key():
    for _ in range(60):
        try:
            with urllib.request.urlopen(REPORT_ADDR + "/pubkey/", timeout=10) as answer:
                return public_key(answer.read().decode())
        except OSError:
            time.sleep(1)
    raise SystemExit("no key at %s/pubkey/" % REPORT_ADDR)


KEY = fetch_key()


class Model(BaseHTTPRequestHandler):
    def do_POST(self):
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            auth = body.get("auth_data") or {}
            signed = signed_for_me(KEY, auth)
        except (ValueError, TypeError, AttributeError) as error:
            return self.answer(400, {"error": "not a routed request: %s" % error})
        if not signed:
            return self.answer(401, {"error": "the route's signature does not hold for %s" % MY_URL})
        prompt = str((body.get("payload") or {}).get("prompt", ""))
        self.answer(200, {"reply": "echo: " + prompt, "worker": WORKER_ID, "version": VERSION, "reqnum": auth.get("reqnum")})
        if "request_idx" in auth:
            done = {"worker_id": WORKER_ID, "mtoken": MTOKEN, "requests": [{"request_idx": auth["request_idx"], "success": True}]}
            threading.Thread(target=post, args=("/delete_requests/", done), daemon=True).start()

    def answer(self, status, body):
        text = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("0.0.0.0", PORT), Model)
    try:
        # Loaded: the autoscaler may route here (it also finds the port answering on its own).
        post("/worker_status/", {"id": WORKER_ID, "mtoken": MTOKEN, "loadtime": 1.0, "cur_load": 0, "url": MY_URL})
    except OSError as error:
        print("could not report the model loaded: %s" % error, flush=True)
    server.serve_forever()
