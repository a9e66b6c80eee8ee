"""The head atlas (attention/analyses/atlas.py): Clark et al.'s behaviours on synthetic attention with known answers,
padding left out, the labels, the divergences and the plane, and the atlas of a text against transformers' own
attention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.atlas import (
    COLUMNS,
    classical_mds,
    divergence_sums,
    head_atlas,
    label,
    punctuation_mask,
    sentence_scores,
    strength,
)
from attention.models.loading import load_model
from attention.text.encoding import encode
from harness.reference import transformers_model


def shifted(tokens: int, offset: int) -> np.ndarray:
    """(T, T): every query's weight on the token `offset` after it (offset −1: the one before), where there is
    one, else on itself."""
    weights = np.zeros((tokens, tokens))
    for query in range(tokens):
        key = query + offset
        weights[query, key if 0 <= key < tokens else query] = 1.0
    return weights


def scores_of(weights: np.ndarray, separators=None, punctuation=None) -> dict[str, float]:
    """One head's scores on one unpadded sentence, by name."""
    tokens = weights.shape[-1]
    mask = np.ones((1, tokens), dtype=np.int64)
    punctuation = np.zeros((1, tokens), bool) if punctuation is None else np.asarray([punctuation])
    separators = None if separators is None else np.asarray([separators])
    row = sentence_scores(weights[None, None], mask, separators, punctuation)[0, 0]
    return dict(zip(COLUMNS, row.tolist(), strict=True))


def test_a_previous_token_diagonal_scores_as_previous_not_next():
    """Clark et al.'s plots swap "previous" and "next"; their code, and this, do not: α[i, i−1] is previous."""
    scores = scores_of(shifted(10, -1))
    assert scores["previous"] == pytest.approx(9 / 10)  # the first token has no token before: it looks at itself
    assert scores["next"] == 0.0
    assert scores["self"] == pytest.approx(1 / 10)
    assert label(np.array(list(scores.values()))) == "previous"


def test_a_next_token_diagonal_and_a_self_diagonal():
    following = scores_of(shifted(8, 1))
    assert following["next"] == pytest.approx(7 / 8) and following["previous"] == 0.0
    assert label(np.array(list(following.values()))) == "next"
    itself = scores_of(np.eye(8))
    assert itself["self"] == 1.0 and itself["entropy"] == 0.0
    assert label(np.array(list(itself.values()))) == "self"


def test_cls_sep_and_punctuation_are_the_weight_on_those_keys_averaged_over_the_queries():
    tokens = 6
    on_first = np.zeros((tokens, tokens))
    on_first[:, 0] = 1.0
    scores = scores_of(on_first, separators=[False] * 5 + [True])
    assert scores["cls"] == 1.0 and scores["sep"] == 0.0
    assert label(np.array(list(scores.values()))) == "cls"
    half = np.zeros((tokens, tokens))
    half[:, 2] = half[:, 4] = 0.35  # two commas take 0.7
    half[:, 5] = 0.3  # [SEP]
    scores = scores_of(half, separators=[False] * 5 + [True], punctuation=[False, False, True, False, True, False])
    assert scores["punct"] == pytest.approx(0.7) and scores["sep"] == pytest.approx(0.3)
    assert label(np.array(list(scores.values()))) == "punct"


def test_a_uniform_head_has_normalised_entropy_one_and_is_broad():
    scores = scores_of(np.full((12, 12), 1 / 12))
    assert scores["entropy"] == pytest.approx(1.0)
    assert label(np.array(list(scores.values()))) == "broad"


def test_a_uniform_causal_head_is_broad_its_rows_normalised_by_the_keys_they_may_see():
    """Row i of a causal head sees i + 1 keys: uniform over them, it spreads as far as its mask lets it. Divided
    by ln T, a uniform causal head read about 0.70 at 17 tokens, and no decoder's head could be called broad."""
    tokens = 17
    causal = np.tril(np.ones((tokens, tokens), dtype=bool))  # (T, T)
    uniform = causal / causal.sum(axis=-1, keepdims=True)
    mask = np.ones((1, tokens), dtype=np.int64)
    row = sentence_scores(uniform[None, None], mask, None, np.zeros((1, tokens), bool), causal[None])[0, 0]
    scores = dict(zip(COLUMNS, row.tolist(), strict=True))
    assert scores["entropy"] == pytest.approx(normalised_entropy(uniform, causal=True)) == pytest.approx(1.0)
    assert label(row) == "broad"
    divided_by_ln_t = np.mean([-np.sum(r[r > 0] * np.log(r[r > 0])) for r in uniform]) / np.log(tokens)
    assert divided_by_ln_t == pytest.approx(0.70, abs=0.01)  # the old measure: "mixed"


def test_a_gpt2_whose_queries_and_keys_are_zero_has_every_head_broad(tiny_gpt2_checkpoint):
    """A real model run with W_Q and W_K at 0 (its own copy): every score is 0, so every row is uniform over the
    keys its causal mask lets it see. Its atlas, against the same numbers from transformers' own attention, calls
    all 8 heads broad (divided by ln T they read 0.7, "mixed")."""
    model = load_model(str(tiny_gpt2_checkpoint))
    for block in transformers_model(model).h:
        width = block.attn.split_size  # C: the first C columns of c_attn make Q, the next C make K
        with torch.no_grad():
            block.attn.c_attn.weight[:, :2 * width] = 0.0
            block.attn.c_attn.bias[:2 * width] = 0.0
    text = "the cat sat on the mat, and the dog sat on the rug."
    atlas, want = atlas_against_transformers(model, text, first_is_cls=False)
    assert len(encode(model, text).tokens[0]) >= 17
    np.testing.assert_allclose(atlas.scores, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(atlas.column("entropy"), 1.0, rtol=1e-5)
    assert (atlas.labels() == "broad").all()


def test_a_text_of_one_token_has_no_entropy_and_a_corpus_leaves_it_out(tiny_gpt2_model):
    """One token can look at itself alone: no spread to measure, NaN, and a corpus's mean is over the others."""
    one = np.ones((1, 1, 1, 1))
    assert np.isnan(sentence_scores(one, np.ones((1, 1)), None, np.zeros((1, 1), bool))[0, 0, COLUMNS.index("entropy")])
    text = "the cat sat, and the dog ran."
    both = head_atlas(tiny_gpt2_model, [(text, None), ("a", None)])
    alone = head_atlas(tiny_gpt2_model, [(text, None)])
    np.testing.assert_allclose(both.column("entropy"), alone.column("entropy"), rtol=1e-5)


def test_below_every_threshold_and_focused_is_mixed():
    weights = 0.4 * shifted(10, -1) + 0.4 * np.eye(10) + 0.2 * shifted(10, 1)
    scores = scores_of(weights)
    values = np.array(list(scores.values()))
    assert scores["entropy"] < 0.8 and label(values) == "mixed"
    assert strength(values) == pytest.approx(max(scores["previous"], scores["self"]))


def test_the_thresholds_differ_by_behaviour():
    """0.55 is enough for previous (0.5), not for [CLS] (0.6)."""
    previous = np.zeros(len(COLUMNS))
    previous[COLUMNS.index("previous")] = 0.55
    assert label(previous) == "previous"
    cls = np.zeros(len(COLUMNS))
    cls[COLUMNS.index("cls")] = 0.55
    assert label(cls) == "mixed"
    cls[COLUMNS.index("cls")] = 0.65
    assert label(cls) == "cls"


def test_a_nan_separator_never_labels():
    scores = np.zeros(len(COLUMNS))
    scores[COLUMNS.index("sep")] = np.nan
    assert label(scores) == "mixed"


def test_padding_is_no_token():
    """A sentence padded to a longer batch scores as the same sentence alone: T is its own length."""
    alone = shifted(5, -1)
    padded = np.zeros((8, 8))
    padded[:5, :5] = alone
    padded[5:, :5] = 0.2  # padded queries attend somewhere: left out
    mask = np.array([[1] * 5 + [0] * 3])
    got = sentence_scores(padded[None, None], mask, np.zeros((1, 8), bool), np.zeros((1, 8), bool))[0, 0]
    want = sentence_scores(alone[None, None], np.ones((1, 5)), np.zeros((1, 5), bool), np.zeros((1, 5), bool))[0, 0]
    np.testing.assert_allclose(got, want)


def test_jensen_shannon_of_heads_matches_its_definition():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(6), size=(2, 3, 6))  # (B=2, H=3, T, T)
    mask = np.ones((2, 6), dtype=np.int64)
    mask[1, 4:] = 0
    weights[1][:, :, 4:] = 0.0
    weights[1] /= weights[1].sum(axis=-1, keepdims=True)

    def js(p, q):
        m = (p + q) / 2
        return 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(q[q > 0] * np.log(q[q > 0] / m[q > 0]))

    want = np.zeros((3, 3))
    for b, length in enumerate(mask.sum(axis=1)):
        for a in range(3):
            for c in range(3):
                want[a, c] += np.mean([js(weights[b, a, i, :length], weights[b, c, i, :length])
                                       for i in range(length)])
    np.testing.assert_allclose(divergence_sums(weights, mask), want, rtol=1e-5, atol=1e-6)


def test_classical_mds_recovers_points_on_a_plane():
    points = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [3.0, 4.0], [1.0, 1.0]])
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    placed = classical_mds(distances)
    np.testing.assert_allclose(np.linalg.norm(placed[:, None] - placed[None], axis=-1), distances, atol=1e-9)


def test_punctuation_reads_gpt2_leading_spaces():
    assert punctuation_mask([("[CLS]", "a", ",", ".", "␣,", "!")]).tolist() == [[False, False, True, True, True,
                                                                                  False]]


def normalised_entropy(alpha: np.ndarray, causal: bool) -> float:
    """One head's (T, T) weights -> the mean over its queries of each row's entropy over ln of the keys its query
    may see (all T both ways; i + 1 for query i under a causal mask), a query that sees one key left out."""
    count = len(alpha)
    spreads = []
    for query, row in enumerate(alpha):
        seen = query + 1 if causal else count
        if seen > 1:
            spreads.append(-np.sum(row[row > 0] * np.log(row[row > 0])) / np.log(seen))
    return float(np.mean(spreads))


def reference_scores(attentions, tokens: list[str], first_is_cls: bool) -> np.ndarray:
    """(L, nh, len(COLUMNS)) from transformers' output_attentions of one text, straight from the definitions
    (first_is_cls: BERT's, which looks both ways; else GPT-2's, causal)."""
    count = len(tokens)
    out = np.zeros((len(attentions), attentions[0].shape[1], len(COLUMNS)))
    for layer, weights in enumerate(attentions):
        for head, alpha in enumerate(weights[0].numpy().astype(np.float64)):
            entropy = normalised_entropy(alpha, causal=not first_is_cls)
            sep = [j for j, token in enumerate(tokens) if token == "[SEP]"]
            punct = [j for j, token in enumerate(tokens) if token.removeprefix("␣") in (".", ",")]
            out[layer, head] = [
                sum(alpha[i, i - 1] for i in range(1, count)) / count,
                sum(alpha[i, i + 1] for i in range(count - 1)) / count,
                sum(alpha[i, i] for i in range(count)) / count,
                alpha[:, 0].sum() / count,
                alpha[:, sep].sum() / count if first_is_cls else np.nan,
                alpha[:, punct].sum() / count,
                entropy,
            ]
    return out


def atlas_against_transformers(model, text: str, first_is_cls: bool):
    """The atlas of one text, and the same from the definitions on transformers' own output_attentions."""
    encoding = encode(model, text)
    with torch.inference_mode():
        output = transformers_model(model)(input_ids=torch.from_numpy(encoding.input_ids),
                             attention_mask=torch.from_numpy(encoding.attention_mask), output_attentions=True)
    return head_atlas(model, [(text, None)]), reference_scores(output.attentions, list(encoding.tokens[0]),
                                                              first_is_cls)


def test_the_atlas_of_a_text_is_the_definitions_on_transformers_attention(bundled):
    atlas, want = atlas_against_transformers(bundled, "The cat sat on the mat, and then, quite suddenly, it left.",
                                             first_is_cls=True)
    np.testing.assert_allclose(atlas.scores, want, rtol=1e-4, atol=1e-5)
    assert atlas.labels()[0, 2] == "previous" and atlas.column("previous")[0, 2] > 0.9  # the head
    assert atlas.divergence.shape == (72, 72) and np.allclose(atlas.divergence, atlas.divergence.T)
    assert atlas.plane().shape == (72, 2)


def test_the_atlas_of_a_gpt2_text_reads_the_first_token_and_has_no_sep(tiny_gpt2_model):
    atlas, want = atlas_against_transformers(tiny_gpt2_model, "the cat sat, and the dog ran.", first_is_cls=False)
    np.testing.assert_allclose(atlas.scores, want, rtol=1e-4, atol=1e-5)
    assert np.isnan(atlas.column("sep")).all()
    assert "sep" not in atlas.labels()


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_batch_with_padding_gives_each_sentence_its_own_atlas(family, request):
    """Two sentences of different lengths run as one padded batch: their atlas is the mean of each alone."""
    model = request.getfixturevalue("bundled" if family == "bert" else "tiny_gpt2_model")
    texts = ["Where are you going?", "The long road north runs past the river, the mill and the old school."]
    together = head_atlas(model, [(text, None) for text in texts])
    alone = [head_atlas(model, [(text, None)]) for text in texts]
    np.testing.assert_allclose(together.scores, (alone[0].scores + alone[1].scores) / 2, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(together.divergence, (alone[0].divergence + alone[1].divergence) / 2,
                               rtol=1e-3, atol=1e-5)
    assert together.sentences == 2
