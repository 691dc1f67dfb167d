"""Greedy generation with a KV cache on CPU, one thread: prefill time and per-token decode latency of eager,
torch.compile (default mode) and thunder.jit (cache="symbolic values"), and thunder with the inductor fusion
executor where thunder-inductor is installed, for a pythia-14m-shaped litgpt GPT and a tiny HF Llama with
DynamicCache and with StaticCache (random weights, no downloads). Tokens of every variant are checked against
eager's before timing.
Writes benchmarks/results/generation-<date><--suffix>.json (device, versions, date).

Each generation runs the prefill and ``--new-tokens`` decode steps; the prefill and every decode step are timed
by the host clock and by this thread's CPU clock (``*_cpu_ms``: on a machine shared with other jobs, the time the
step itself ran, without the time it waited for a core). After one warm-up generation per variant (which holds
the compilations), the variants run ``--repeat`` rounds, one generation each per round, interleaved so that load
from other processes hits them alike; the medians over all rounds are reported, with the compile counts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import time

import torch

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Timer:
    """Records one step's host-clock and thread-CPU seconds under ``times[name]`` and ``times[name + "_cpu"]``."""

    def __init__(self, times, name):
        self.times, self.name = times, name

    def __enter__(self):
        self.start, self.start_cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *exc):
        self.times[self.name].append(time.perf_counter() - self.start)
        self.times[self.name + "_cpu"].append(time.thread_time() - self.start_cpu)


def new_times():
    return {"prefill": [], "decode": [], "prefill_cpu": [], "decode_cpu": []}


def litgpt_model():
    import litgpt

    torch.manual_seed(0)
    model = litgpt.GPT(litgpt.Config.from_name("pythia-14m", block_size=256)).eval()

    def run(forward, prompt, new_tokens, times):
        model.set_kv_cache(batch_size=1)  # a fresh, zeroed cache per generation
        tokens, pos = [], prompt.shape[1]
        with Timer(times, "prefill"):
            logits = forward(prompt, torch.arange(pos), input_pos_maxp1=pos)
        for _ in range(new_tokens):
            token = logits[:, -1:].argmax(-1)
            tokens.append(token)
            with Timer(times, "decode"):
                logits = forward(token, torch.tensor([pos]), input_pos_maxp1=pos + 1)
            pos += 1
        return torch.cat(tokens, 1)

    return model, model.config.padded_vocab_size, run


def hf_llama_model(static=False):
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=1024, hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    model = transformers.LlamaForCausalLM(config).eval()

    def run(forward, prompt, new_tokens, times):
        # StaticCache: preallocated key and value tensors written in place (index_copy_), sized for the generation
        cache = transformers.StaticCache(config=config, max_cache_len=prompt.shape[1] + new_tokens + 1) if static \
            else transformers.DynamicCache()
        tokens = []
        with Timer(times, "prefill"):
            logits = forward(input_ids=prompt, past_key_values=cache, use_cache=True).logits
        for _ in range(new_tokens):
            token = logits[:, -1:].argmax(-1)
            tokens.append(token)
            with Timer(times, "decode"):
                logits = forward(input_ids=token, past_key_values=cache, use_cache=True).logits
        return torch.cat(tokens, 1)

    return model, config.vocab_size, run


MODELS = {"litgpt pythia-14m": litgpt_model, "HF Llama tiny (DynamicCache)": hf_llama_model,
          "HF Llama tiny (StaticCache)": lambda: hf_llama_model(static=True)}


def variants(model):
    found = {
        "eager": model,
        "torch.compile": torch.compile(model),
        "thunder": thunder.jit(model, cache="symbolic values"),
    }
    inductor = thunder.extend.get_executor("inductor")
    if inductor is not None and inductor.availability()[0]:
        found["thunder+inductor"] = thunder.jit(model, cache="symbolic values", executors=[inductor])
    return found


JITTED = ("thunder", "thunder+inductor")
# the medians reported: "<step>_ms<suffix>"
STEPS = {"prefill": "", "decode": "_per_token", "prefill_cpu": "", "decode_cpu": "_per_token"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompt", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    p.add_argument("--suffix", default="", help="appended to the file name (generation-<date><suffix>.json)")
    p.add_argument("--note", default="", help="recorded with the settings (the machine's load, the branch)")
    p.add_argument("--models", nargs="*", choices=list(MODELS), default=list(MODELS), help="the cases run (all)")
    args = p.parse_args()
    torch.set_num_threads(1)
    results = {"settings": vars(args), "cases": {}}
    for name in args.models:
        make = MODELS[name]
        model, vocab, run = make()
        prompt = torch.randint(0, vocab, (1, args.prompt), generator=torch.Generator().manual_seed(1))
        case = {}
        with torch.no_grad():
            expected = run(model, prompt, args.new_tokens, new_times())
            forwards = variants(model)
            times = {variant: new_times() for variant in forwards}
            for variant, forward in forwards.items():
                start = time.perf_counter()
                tokens = run(forward, prompt, args.new_tokens, new_times())
                case[variant] = {"first_generation_s": round(time.perf_counter() - start, 2)}
                assert torch.equal(tokens, expected), f"{name}, {variant}: tokens differ from eager's"
            for _ in range(args.repeat):
                for variant, forward in forwards.items():
                    tokens = run(forward, prompt, args.new_tokens, times[variant])
                    assert torch.equal(tokens, expected), f"{name}, {variant}: tokens differ from eager's"
            for variant, forward in forwards.items():
                case[variant] = {**{f"{step}_ms{per}": round(statistics.median(times[variant][step]) * 1e3, 3)
                                    for step, per in STEPS.items()}, **case[variant]}
                if variant in JITTED:
                    case[variant]["compiles"] = thunder.cache_misses(forward)
                print(name, variant, json.dumps(case[variant]), flush=True)
        for variant in case:
            if variant != "eager":
                for clock in ("", "_cpu"):
                    case[variant][f"decode{clock}_over_eager"] = round(
                        case[variant][f"decode{clock}_ms_per_token"] / case["eager"][f"decode{clock}_ms_per_token"], 3)
        results["cases"][name] = case
    import transformers

    results["machine"] = {"device": "cpu (1 thread)", "platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version(), "torch": torch.__version__,
                          "transformers": transformers.__version__, "thunder": thunder.__version__,
                          "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"generation-{datetime.date.today().isoformat()}{args.suffix}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
