"""`load_weights` at run time: a torch state_dict written by torch itself
(`torch.save`, `.pt`/`.bin`) or by safetensors read into a Quiver model, from
a `.qv` program (`quiver run`) and from Python (`quiver.load_weights`): the
prefix and rename maps, strict errors naming every missing, unexpected and
mis-shaped key with its shape and the `.qv` line, dtype conversion, and a
round trip through `save`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

import quiver
from quiver.cli import main as quiver_main

HEAD = """\
import nn

dim D = 4
dim H = 3

model Enc:
    param w: [D H] = xavier
    param b: [H] = zeros

model Net:
    param enc: Enc
    param head: [H] = zeros
    buffer scale: [] = 1.0
"""

# the torch twin's state_dict, with its own names: `model.` before every key
# and `lm_head` for Quiver's `head`
W = torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10
B = torch.tensor([1.0, 2.0, 3.0])
HEAD_T = torch.tensor([-1.0, 0.5, 2.0])
SCALE = torch.tensor(3.0)


def theirs(dtype=torch.float32) -> dict[str, torch.Tensor]:
    return {
        "model.enc.w": W.to(dtype),
        "model.enc.b": B.to(dtype),
        "model.lm_head": HEAD_T.to(dtype),
        "model.scale": SCALE.to(dtype),
    }


def run(folder: Path, capsys, body: str) -> tuple[int, str, str]:
    path = folder / "prog.qv"
    path.write_text(HEAD + "\nfn main():\n" + textwrap.indent(textwrap.dedent(body), "    "))
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    return code, out, err


SHOW = """\
print(m.enc.w[3, 2], m.enc.b[2], m.head[0], m.scale)
"""


@pytest.mark.parametrize("name", ["w.pt", "w.bin", "w.safetensors"])
def test_prefix_and_rename_from_a_torch_or_safetensors_file(tmp_path, capsys, name):
    if name.endswith(".safetensors"):
        save_file(theirs(), str(tmp_path / name))
    else:
        torch.save(theirs(), tmp_path / name)
    code, out, err = run(
        tmp_path,
        capsys,
        f"""\
        m = Net.init(seed=0)
        load_weights(m, "{name}", prefix="model.", rename=(("lm_head", "head"),))
        """
        + SHOW,
    )
    assert code == 0, err
    assert out.split() == ["1.1000", "3.0000", "-1.0000", "3.0000"]


def test_strict_error_names_every_key_with_its_shape_and_the_line(tmp_path, capsys):
    data = theirs()
    data["model.enc.w"] = torch.zeros(3, 4)  # transposed
    data["model.extra"] = torch.zeros(2, 2)
    del data["model.scale"]
    save_file(data, str(tmp_path / "w.safetensors"))
    code, _, err = run(
        tmp_path,
        capsys,
        """\
        m = Net.init(seed=0)
        load_weights(m, "w.safetensors", prefix="model.", rename=(("lm_head", "head"),))
        """,
    )
    assert code != 0
    assert "prog.qv:17:5: error: w.safetensors does not fit Net:" in err
    lines = err.split("does not fit Net:")[1].strip().splitlines()
    assert [x.strip() for x in lines[:3]] == [
        "missing: scale ([] f32)",
        "unexpected: extra ([2 2] f32)",
        "shape: enc.w is [3 4] f32 in the file, but Net.enc.w is [4 3] f32",
    ]


def test_not_strict_keeps_the_missing_and_leaves_the_unexpected(tmp_path, capsys):
    data = theirs()
    del data["model.enc.b"]
    data["model.unused"] = torch.ones(5)
    torch.save(data, tmp_path / "w.pt")
    code, out, err = run(
        tmp_path,
        capsys,
        """\
        m = Net.init(seed=0)
        load_weights(m, "w.pt", prefix="model.", rename=(("lm_head", "head"),), strict=False)
        """
        + SHOW,
    )
    assert code == 0, err
    assert out.split() == ["1.1000", "0.0000", "-1.0000", "3.0000"]


def test_a_shape_that_differs_is_an_error_even_when_not_strict(tmp_path, capsys):
    data = theirs()
    data["model.lm_head"] = torch.zeros(4)
    torch.save(data, tmp_path / "w.pt")
    code, _, err = run(
        tmp_path,
        capsys,
        """\
        m = Net.init(seed=0)
        load_weights(m, "w.pt", prefix="model.", rename=(("lm_head", "head"),), strict=False)
        """,
    )
    assert code != 0
    assert "shape: head is [4] f32 in the file, but Net.head is [3] f32" in err


def test_bf16_checkpoint_into_an_f32_model_with_dtype(tmp_path, capsys):
    save_file(theirs(torch.bfloat16), str(tmp_path / "w.safetensors"))
    body = 'm = Net.init(seed=0)\nload_weights(m, "w.safetensors", prefix="model.", rename=(("lm_head", "head"),){})\n'
    code, _, err = run(tmp_path, capsys, body.format(""))
    assert code != 0
    assert "shape: enc.w is [4 3] bf16 in the file, but Net.enc.w is [4 3] f32" in err
    assert "dtype=f32" in err
    code, out, err = run(tmp_path, capsys, body.format(", dtype=f32") + SHOW)
    assert code == 0, err
    want = W.to(torch.bfloat16).float()[3, 2].item()
    assert float(out.split()[0]) == pytest.approx(want, abs=1e-4)


def test_round_trip_with_save(tmp_path, capsys):
    code, out, err = run(
        tmp_path,
        capsys,
        """\
        m = Net.init(seed=0)
        save("ckpt.pt", m)
        m2 = Net.init(seed=5)
        load_weights(m2, "ckpt.pt")
        print(sum(abs(m2.enc.w - m.enc.w)))
        """,
    )
    assert code == 0, err
    assert out.split() == ["0.0000"]
    sd = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert sorted(sd) == ["enc.b", "enc.w", "head", "scale"]


# --- from Python -------------------------------------------------------------------


def program(tmp_path: Path):
    path = tmp_path / "net.qv"
    path.write_text(HEAD)
    return quiver.load(str(path))


def test_python_rename_function_and_dict(tmp_path):
    prog = program(tmp_path)
    m = prog.Net.init(seed=0)
    names = {"lm_head": "head"}
    missing, unexpected = quiver.load_weights(m, theirs(), prefix="model.", rename=lambda k: names.get(k, k))
    assert (missing, unexpected) == ([], [])
    assert torch.equal(m.enc.w, W) and torch.equal(m.head, HEAD_T)
    m2 = prog.Net.init(seed=1)
    quiver.load_weights(m2, theirs(), prefix=("model.", ""), rename={"lm_head": "head"})
    assert torch.equal(m2.enc.b, B)


def test_python_function_drops_keys_and_not_strict_returns_the_lists(tmp_path):
    prog = program(tmp_path)
    m = prog.Net.init(seed=0)
    drop = lambda k: None if k.endswith("scale") else k.replace("lm_head", "head")
    missing, unexpected = quiver.load_weights(
        m, {**theirs(), "model.more": torch.ones(2)}, prefix="model.", rename=drop, strict=False
    )
    assert missing == ["scale"]
    assert unexpected == ["more"]
    assert m.scale.item() == 1.0 and torch.equal(m.enc.w, W)


def test_python_error_lists_all_sorted(tmp_path):
    prog = program(tmp_path)
    m = prog.Net.init(seed=0)
    with pytest.raises(quiver.runtime.WeightsError) as e:
        quiver.load_weights(m, {"z": torch.ones(1), "a": torch.ones(1)})
    text = str(e.value)
    assert text.index("missing: enc.b") < text.index("missing: enc.w") < text.index("missing: head")
    assert text.index("unexpected: a ([1] f32)") < text.index("unexpected: z ([1] f32)")


def test_python_into_a_torch_module(tmp_path):
    lin = torch.nn.Linear(3, 2)
    sd = {"net.0.weight": torch.ones(2, 3), "net.0.bias": torch.zeros(2)}
    assert quiver.load_weights(lin, sd, prefix="net.0.") == ([], [])
    assert torch.equal(lin.weight.detach(), torch.ones(2, 3))


def test_two_keys_mapped_to_one_field(tmp_path):
    prog = program(tmp_path)
    m = prog.Net.init(seed=0)
    with pytest.raises(quiver.runtime.WeightsError, match="both mapped to head"):
        quiver.load_weights(m, {"head": torch.ones(3), "lm_head": torch.ones(3)}, rename={"lm_head": "head"})


def test_into_a_sub_model_in_a_mut_fn(tmp_path, capsys):
    torch.save({"w": W, "b": B}, tmp_path / "enc.pt")
    path = tmp_path / "prog.qv"
    path.write_text(
        HEAD
        + 'fn warm(mut m: Net):\n    load_weights(m.enc, "enc.pt")\n\n'
        + "fn main():\n    m = Net.init(seed=0)\n    warm(m)\n    "
        + SHOW
    )
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.split() == ["1.1000", "3.0000", "0.0000", "1.0000"]


def test_a_file_of_several_entries_is_named(tmp_path, capsys):
    code, _, err = run(
        tmp_path,
        capsys,
        """\
        m = Net.init(seed=0)
        save("all.pt", model=m, step=3)
        load_weights(m, "all.pt")
        """,
    )
    assert code != 0
    assert "all.pt is not a state_dict: its entries model, step are not tensors" in err


def test_python_from_files_with_a_torch_dtype(tmp_path):
    prog = program(tmp_path)
    save_file(theirs(torch.bfloat16), str(tmp_path / "w.safetensors"))
    torch.save(theirs(), tmp_path / "w.pt")
    m = prog.Net.init(seed=0)
    rename = {"lm_head": "head"}
    quiver.load_weights(m, tmp_path / "w.safetensors", prefix="model.", rename=rename, dtype=torch.float32)
    assert m.enc.w.dtype == torch.float32
    assert torch.equal(m.enc.w, W.to(torch.bfloat16).float())
    m2 = prog.Net.init(seed=0)
    quiver.load_weights(m2, str(tmp_path / "w.pt"), prefix="model.", rename=rename)
    assert torch.equal(m2.enc.w, W)
    with pytest.raises(quiver.runtime.WeightsError, match="nothing.pt"):
        quiver.load_weights(m2, str(tmp_path / "nothing.pt"))
    with pytest.raises(quiver.runtime.WeightsError, match="dtype='i64'"):
        quiver.load_weights(m2, str(tmp_path / "w.pt"), dtype="i64")


GPT2_PART = """\
dim V = 50
dim P = 16
dim E = 8

model Table[N]:
    param weight: [N E] = normal(0.0, 0.02)

model Norm:
    param weight: [E] = ones
    param bias: [E] = zeros

model Gpt:
    param wte: Table[V]
    param wpe: Table[P]
    param ln_f: Norm
"""


def test_a_hugging_face_folder_made_by_save_pretrained(tmp_path):
    """A GPT-2 folder as `transformers` writes it (tiny random config, no
    download): its embeddings and final norm, under `transformer.`, load into a
    Quiver model with those fields; the blocks it lacks are the unexpected keys."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=8, n_layer=1, n_head=2)
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(cfg)
    hf.save_pretrained(tmp_path / "gpt2")
    path = tmp_path / "gpt.qv"
    path.write_text(GPT2_PART)
    m = quiver.load(str(path)).Gpt.init(seed=0)
    missing, unexpected = quiver.load_weights(
        m, tmp_path / "gpt2" / "model.safetensors", prefix="transformer.", strict=False
    )
    assert missing == []
    assert unexpected and all(k.startswith("h.0.") for k in unexpected) and unexpected == sorted(unexpected)
    assert torch.equal(m.wte.weight, hf.transformer.wte.weight.detach())
    assert torch.equal(m.wpe.weight, hf.transformer.wpe.weight.detach())
    assert torch.equal(m.ln_f.bias, hf.transformer.ln_f.bias.detach())
    with pytest.raises(quiver.runtime.WeightsError) as e:
        quiver.load_weights(m, tmp_path / "gpt2" / "model.safetensors", prefix="transformer.")
    assert "unexpected: h.0.attn.c_attn.weight ([8 24] f32)" in str(e.value)
