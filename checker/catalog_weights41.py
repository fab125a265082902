"""The diagnostics of `load_weights(m, path, ...)`, a torch or safetensors
state_dict read into a model, and `load_tokenizer(path, V)`, a Hugging Face
tokenizer.json (registered in the one catalog, `catalog_code.CODES`:
checker/catalog.py imports this module at its end, so they come after its
own codes)."""

from __future__ import annotations

from .catalog_code import _code

E1005 = _code(
    "E1005",
    "load_weights loads into a model",
    "load_weights loads a state_dict into a model: {reason}",
    """
    `load_weights(m, path, ...)` reads a torch file (`.pt`, `.bin`) or a
    `.safetensors` file into the model `m`, in place: its first argument is
    a model (one the function may change), its second the path of the file,
    a `Str` relative to the `.qv` file. It is a statement: it gives nothing.
    """,
    """
    fn main():
        x = zeros([4])
        load_weights(x, "model.safetensors")
    """,
    """
    model Lin:
        param w: [4] = zeros

    fn main():
        m = Lin.init(seed=0)
        load_weights(m, "model.safetensors")
    """,
    variants={
        "not_a_model": "its first argument is the model, found {found}",
        "arguments": 'it takes the model and the path, as in load_weights(m, "model.safetensors"), found {found}',
    },
)

E1006 = _code(
    "E1006",
    "invalid option of load_weights",
    "load_weights: {problem}",
    """
    `load_weights` takes these options, each by keyword:

    - `prefix="transformer."`: a `Str` stripped from the start of the file's
      keys, or a pair `("old.", "new.")` that replaces a leading `old.`
      (`("", "enc.")` adds `enc.` to every key);
    - `rename=(("lm_head.weight", "head.weight"), ...)`: pairs (key after the
      prefix, field path) renaming single keys;
    - `strict=False`: the fields the file lacks keep their values and the
      keys the model lacks are left out (a `Bool`, `True` when not given);
    - `dtype=f32`: the file's float tensors are converted first (a bf16
      checkpoint into an f32 model).
    """,
    """
    model Lin:
        param w: [4] = zeros

    fn main():
        m = Lin.init(seed=0)
        load_weights(m, "model.safetensors", prefix=3)
    """,
    """
    model Lin:
        param w: [4] = zeros

    fn main():
        m = Lin.init(seed=0)
        load_weights(m, "model.safetensors", prefix="model.")
    """,
    variants={
        "unknown_option": "it has no option '{name}' (its options: prefix, rename, strict, dtype)",
        "twice": "the option '{name}' is given twice",
        "prefix": 'prefix= is a Str or a pair of them ("old.", "new."), found {found}',
        "rename": 'rename= is a pair (key, field) or a tuple of them, as in (("lm_head.weight", "head.weight"),), found {found}',
        "dtype": "dtype= is a float element type (f32, f64, f16, bf16), found {found}",
    },
)

E1007 = _code(
    "E1007",
    "load_tokenizer's size is a dim",
    "load_tokenizer(path, V) reads a vocabulary of V tokens: {reason}",
    """
    `load_tokenizer("tokenizer.json", V)` reads a Hugging Face tokenizer
    file into a `Vocab[V]`, which `encode` and `decode` take. `V` is a dim
    (a `dim` constant or a generic dim of the function): the file's
    vocabulary size, added tokens included, is checked against it when the
    program runs, and the ids `encode` gives are `Index[V]`, the embedding
    size of the model they index.
    """,
    """
    fn main():
        tok = load_tokenizer("tokenizer.json", "V")
        print(encode(tok, "hello"))
    """,
    """
    dim V = 1000

    fn main():
        tok = load_tokenizer("tokenizer.json", V)
        print(encode(tok, "hello"))
    """,
    variants={
        "not_a_dim": "its second argument is a dim, found {found}",
        "arguments": "it takes the path and the dim, found {found}",
    },
)
