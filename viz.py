"""Attention arrays + token strings -> figures and word alignments. No torch, no Gradio.

Maps are numpy arrays (L layers, H heads, rows, cols); rows are the queries (the token that
attends), columns the keys (the tokens attended to).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

KINDS = {
    "encoder": "Encoder self-attention (source → source)",
    "decoder": "Decoder self-attention (target → earlier target)",
    "cross": "Cross-attention (target → source)",
}
COLORSCALE = "Viridis"


def select_map(maps: np.ndarray, layer: int, head: int | None) -> np.ndarray:
    """One (rows, cols) map: a head of a layer, or the mean over the layer's heads (head=None)."""
    if not 0 <= layer < maps.shape[0]:
        raise ValueError(f"layer {layer} out of range: the model has {maps.shape[0]} layers")
    if head is None:
        return maps[layer].mean(axis=0)
    if not 0 <= head < maps.shape[1]:
        raise ValueError(f"head {head} out of range: the model has {maps.shape[1]} heads")
    return maps[layer, head]


def axis_labels(kind: str, source_tokens: list[str], target_tokens: list[str],
                decoder_input_tokens: list[str]) -> tuple[list[str], list[str]]:
    """(column labels, row labels) of a map of this kind."""
    if kind == "encoder":
        return source_tokens, source_tokens
    if kind == "decoder":
        return decoder_input_tokens, target_tokens
    if kind == "cross":
        return source_tokens, target_tokens
    raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")


def _escape(labels: list[str]) -> list[str]:
    """Plotly reads tick and hover text as HTML: '</s>' would vanish as a closing tag."""
    return [html.escape(label, quote=False) for label in labels]


def _heatmap(matrix: np.ndarray, x_labels: list[str], y_labels: list[str], show_scale: bool = True) -> go.Heatmap:
    # Positions, not labels, on the axes: a sentence may repeat a token ("a ... a") and a
    # categorical axis would fold the two rows into one.
    hover = [[[y, x] for x in x_labels] for y in y_labels]  # (rows, cols, 2): the token pair
    return go.Heatmap(
        z=matrix,
        x=list(range(len(x_labels))),
        y=list(range(len(y_labels))),
        customdata=hover,
        hovertemplate="%{customdata[0]} → %{customdata[1]}<br>weight %{z:.4f}<extra></extra>",
        colorscale=COLORSCALE,
        zmin=0.0,
        zmax=1.0,
        showscale=show_scale,
        colorbar=dict(title="weight") if show_scale else None,
    )


def attention_figure(matrix: np.ndarray, x_labels: list[str], y_labels: list[str], title: str) -> go.Figure:
    """One large map with token labels on both axes, a color scale, and weight + pair on hover."""
    if matrix.shape != (len(y_labels), len(x_labels)):
        raise ValueError(f"map of shape {matrix.shape} does not fit {len(y_labels)} x {len(x_labels)} labels")
    x_text, y_text = _escape(x_labels), _escape(y_labels)
    fig = go.Figure(_heatmap(matrix, x_text, y_text))
    # Margins from the label lengths: plotly's automargin leaves large empty bands here.
    left = 60 + 7 * max((len(label) for label in y_labels), default=1)
    bottom = 70 + 6 * max((len(label) for label in x_labels), default=1)
    fig.update_layout(
        title=dict(text=title, x=0.01, xanchor="left"),
        height=int(min(1400, 60 + bottom + 28 * len(y_labels))),
        margin=dict(l=left, r=20, t=50, b=bottom),
        xaxis=dict(tickmode="array", tickvals=list(range(len(x_labels))), ticktext=x_text, tickangle=-60,
                   title="attended to (keys)", automargin=False),
        yaxis=dict(tickmode="array", tickvals=list(range(len(y_labels))), ticktext=y_text, autorange="reversed",
                   title="attending (queries)", automargin=False),
    )
    return fig


def overview_figure(maps: np.ndarray, x_labels: list[str], y_labels: list[str], title: str) -> go.Figure:
    """Small multiples: every layer (rows) x every head (columns), plus the mean over heads."""
    layers, heads = maps.shape[:2]
    titles = [f"L{l + 1} H{h + 1}" if h < heads else f"L{l + 1} mean" for l in range(layers) for h in range(heads + 1)]
    fig = make_subplots(rows=layers, cols=heads + 1, subplot_titles=titles, horizontal_spacing=0.02,
                        vertical_spacing=0.06)
    for l in range(layers):
        for h in range(heads + 1):
            matrix = maps[l, h] if h < heads else maps[l].mean(axis=0)
            fig.add_trace(_heatmap(matrix, _escape(x_labels), _escape(y_labels), show_scale=(l == 0 and h == heads)),
                          row=l + 1, col=h + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, autorange="reversed")
    fig.update_layout(title=title, height=int(120 + 170 * layers), margin=dict(l=10, r=10, t=70, b=10))
    return fig


# ----- word alignment -----------------------------------------------------------------------

SPECIAL = {"<s>", "</s>", "<pad>", "<unk>"}


def merge_subwords(tokens: list[str]) -> list[tuple[str, list[int]]]:
    """Group subword positions into words: a token that starts with '▁' starts a new word, and
    punctuation stands alone. Special tokens are left out. Returns (word, token positions)."""
    words: list[tuple[str, list[int]]] = []
    previous_was_punct = False
    for i, token in enumerate(tokens):
        if token in SPECIAL:
            previous_was_punct = True
            continue
        text = token.replace("▁", " ")
        is_punct = text.strip() != "" and all(not c.isalnum() for c in text.strip())
        starts_word = not words or token.startswith("▁") or is_punct or previous_was_punct
        if starts_word:
            words.append((text.strip(), [i]))
        else:
            words[-1] = (words[-1][0] + text, words[-1][1] + [i])
        previous_was_punct = is_punct
    return [(w, idx) for w, idx in words if w]


@dataclass
class Alignment:
    source_words: list[str]
    target_words: list[str]
    weights: np.ndarray  # (target words, source words): attention mass on each source word
    links: list[tuple[str, str, float]]  # each target word, its most attended source word, that mass


def word_alignment(cross: np.ndarray, source_tokens: list[str], target_tokens: list[str]) -> Alignment:
    """From one cross-attention map (T, S): the mass each target word puts on each source word
    (summed over the source word's subwords, averaged over the target word's)."""
    src_words, tgt_words = merge_subwords(source_tokens), merge_subwords(target_tokens)
    weights = np.zeros((len(tgt_words), len(src_words)), dtype=np.float32)
    for t, (_, t_idx) in enumerate(tgt_words):
        for s, (_, s_idx) in enumerate(src_words):
            weights[t, s] = cross[np.ix_(t_idx, s_idx)].sum(axis=1).mean()
    links = []
    for t, (word, _) in enumerate(tgt_words):
        if len(src_words):
            best = int(weights[t].argmax())
            links.append((word, src_words[best][0], float(weights[t, best])))
    return Alignment([w for w, _ in src_words], [w for w, _ in tgt_words], weights, links)


def alignment_figure(alignment: Alignment, title: str) -> go.Figure:
    """Word-level cross-attention with each English word's strongest source word marked."""
    fig = attention_figure(alignment.weights, alignment.source_words, alignment.target_words, title)
    if alignment.links:
        cols = [int(alignment.weights[t].argmax()) for t in range(len(alignment.target_words))]
        fig.add_trace(go.Scatter(x=cols, y=list(range(len(cols))), mode="markers", hoverinfo="skip",
                                 marker=dict(symbol="square-open", size=18, color="#ff4b4b", line=dict(width=2)),
                                 showlegend=False))
    n_rows, n_cols = alignment.weights.shape
    fig.update_xaxes(range=[-0.5, n_cols - 0.5], title="German words")  # the markers must not widen the axes
    fig.update_yaxes(range=[n_rows - 0.5, -0.5], autorange=False, title="English words")
    fig.update_layout(plot_bgcolor="white")
    return fig


# ----- static export --------------------------------------------------------------------------


def save_png(matrix: np.ndarray, x_labels: list[str], y_labels: list[str], title: str, path: str | Path) -> Path:
    """The same map as a PNG (matplotlib), for download."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = max(4.0, 0.38 * len(x_labels) + 2.5)
    height = max(3.5, 0.32 * len(y_labels) + 2.0)
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(x_labels)), x_labels, rotation=60, ha="left")
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(y_labels)), y_labels)
    ax.set_title(title, pad=12)
    fig.colorbar(image, ax=ax, label="weight")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
