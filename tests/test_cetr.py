"""CETR (Weninger et al., WWW 2010): tag ratios, smoothing, the three clusterings, on the
paper's own examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from extractors import cetr
from extractors.document import parse_document

PAGES = Path(__file__).parent / "fixtures" / "pages"
PARAGRAPH = (
    "Police said the bridge would stay closed until engineers had checked every cable, and "
    "the mayor asked drivers to use the ring road for the rest of the week. {}"
)


def tree_of(page: str | bytes):
    return parse_document(page).tree


def selected_text(selection) -> str:
    return "\n".join(text for _, text in selection.blocks) if selection else ""


def news_page(menu_lines: int = 220, content_lines: int = 40, footer_lines: int = 190) -> str:
    """A page shaped like the Hutchinson News article of Figures 1-3: a long run of menu and
    link lines, the story in the middle, more links and notices at the bottom."""
    menu = [f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(menu_lines)]
    story = [f"<p>{PARAGRAPH.format(f'Paragraph {i}.')}</p>" for i in range(content_lines)]
    footer = [f'<div class="ad"><a href="/ad/{i}">Ad {i}</a></div>' for i in range(footer_lines)]
    head = ["<html><head><title>News</title></head><body>", "<ul>", *menu, "</ul>"]
    return "\n".join([*head, "<div>", *story, "</div>", *footer, "</body></html>"])


def test_example_1_tag_ratios() -> None:
    # Seed 004, Example 1: "TR=0, 0, 5.5, 37, 20.5, 0" for the six lines of the snippet.
    profile = cetr.line_profile(tree_of((PAGES / "cetr-hutchinson.html").read_bytes()))
    assert profile.ratios.tolist() == [0.0, 0.0, 5.5, 37.0, 20.5, 0.0]
    assert profile.text_chars.tolist() == [0, 0, 11, 37, 41, 0]


def test_script_style_and_empty_lines_are_removed_before_ratios() -> None:
    page = "<html><head>\n<style>\np { color: red; }\n</style>\n<script>\nvar x = 1;\n</script>\n"
    page += "</head><body>\n\n\n<p>Some words here</p>\n\n</body></html>"
    profile = cetr.line_profile(tree_of(page))
    # The script and style text are not text, their lines are gone, and so are empty lines.
    assert all(
        count > 0 or tags > 0 for count, tags in zip(profile.text_chars, profile.tags, strict=True)
    )
    assert profile.text_chars.sum() == len("Some words here")


def test_single_line_page_is_rebroken_every_65_characters() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    page = f'<html><body><div class="a"><p>{words}</p><a href="/x">link</a></div></body></html>'
    profile = cetr.line_profile(tree_of(page))
    assert len(profile.ratios) > 30  # one line became a histogram
    # Every re-broken line holds at most 65 characters of text.
    assert max(profile.text_chars) <= cetr.REBREAK_CHARS


def test_rebreak_cuts_after_a_tag_that_straddles_the_65th_character() -> None:
    run = (None, False)
    text = cetr._Piece("x" * 60, run, None, "paragraph")
    lines = cetr._rebreak([text, 20, cetr._Piece("tail", run, None, "paragraph")])
    # The 65th character is inside the 20-character tag: the break comes right after the tag.
    assert [[item if isinstance(item, int) else item.text for item in line] for line in lines] == [
        ["x" * 60, 20],
        ["tail"],
    ]


def test_tagless_page_is_all_content() -> None:
    tree = tree_of("<body>Only text here.\nNo markup at all.\nThird line.</body>")
    selection = cetr.select(tree)
    assert selected_text(selection) == "Only text here. No markup at all. Third line."


def test_gaussian_kernel_radius_is_one_standard_deviation() -> None:
    values = np.array([0.0] * 10 + [10.0] * 10 + [0.0] * 10)
    sigma = float(np.std(values))  # about 4.7: radius 5, window 11
    smoothed = cetr.gaussian_smooth(values)
    assert len(smoothed) == len(values)
    # A spike spreads exactly ceil(sigma) lines to each side, no further.
    spike = np.zeros(41)
    spike[20] = 100.0
    spread = np.flatnonzero(cetr.gaussian_smooth(spike) > 1e-9)
    radius = int(np.ceil(np.std(spike)))
    assert spread.tolist() == list(range(20 - radius, 20 + radius + 1))
    # Normalised: a constant histogram stays constant, edges included.
    assert np.allclose(cetr.gaussian_smooth(np.full(25, 7.0)), 7.0)
    assert smoothed[15] > smoothed[5] and sigma > 4


def test_smoothing_keeps_short_lines_among_content() -> None:
    # The Declaration of Independence case: short one-line grievances between long passages
    # fall below the threshold unless the histogram is smoothed first.
    ratios = np.array([1.0] * 30 + [80, 80, 5, 4, 6, 5, 80, 80] + [1.0] * 30)
    short = slice(32, 36)
    assert not cetr.threshold_content(ratios)[short].any()
    assert cetr.threshold_content(cetr.gaussian_smooth(ratios))[short].all()


def test_derivative_spikes_at_the_borders_of_a_content_section() -> None:
    ratios = np.array([2.0] * 50 + [60.0] * 30 + [2.0] * 50)
    derivatives = cetr.absolute_derivatives(cetr.gaussian_smooth(ratios))
    peaks = sorted(np.argsort(derivatives)[-2:])
    assert abs(peaks[0] - 48) <= 4 and abs(peaks[1] - 78) <= 4  # Figure 4's two spikes


def test_lambda_trades_recall_for_precision() -> None:
    smoothed = cetr.gaussian_smooth(cetr.line_profile(tree_of(news_page())).ratios)
    kept = {c: cetr.threshold_content(smoothed, c) for c in (0.0, 0.5, 1.0, 1.5)}
    assert kept[0.0].all()  # lambda = 0: every line, recall is always 100%
    for low, high in ((0.0, 0.5), (0.5, 1.0), (1.0, 1.5)):
        assert not (kept[high] & ~kept[low]).any()  # a higher threshold only removes lines
        assert kept[high].sum() < kept[low].sum()


def test_kmeans_labels_the_cluster_nearest_zero_as_not_content() -> None:
    smoothed = np.array([0.5, 1.0, 0.8] * 10 + [40.0, 42.0] * 5 + [90.0, 95.0] * 5)
    content = cetr.kmeans_content(smoothed)
    assert not content[:30].any() and content[30:].all()


def test_two_d_clustering_fixes_one_centroid_at_the_origin() -> None:
    smoothed = np.array([1.0, 0.5, 2.0, 1.5] * 20 + [50.0, 55.0, 60.0] * 5)
    derivatives = np.array([0.1, 0.2, 0.0, 0.3] * 20 + [4.0, 0.5, 3.0] * 5)
    content = cetr.two_d_content(smoothed, derivatives)
    assert not content[:80].any() and content[80:].all()


@pytest.mark.parametrize("variant", list(cetr.Variant))
def test_every_variant_finds_the_story_of_a_hutchinson_shaped_page(variant) -> None:
    selection = cetr.select(tree_of(news_page()), variant=variant)
    text = selected_text(selection)
    assert all(f"Paragraph {i}." in text for i in range(40))
    kept_menu = sum(f"Section {i}\n" in text + "\n" for i in range(220))
    kept_ads = sum(f"Ad {i}\n" in text + "\n" for i in range(190))
    assert kept_menu + kept_ads < 0.25 * (220 + 190)


def test_two_d_model_keeps_both_sections_of_a_folded_story() -> None:
    # "There is no rule which states that a webpage may only have a single content section":
    # an advertisement in the middle of the story (the fold) must not cut off its second half.
    menu = [f'<li><a href="/m/{i}">Menu {i}</a></li>' for i in range(150)]
    first = [f"<p>{PARAGRAPH.format(f'First {i}.')}</p>" for i in range(15)]
    fold = [f'<div class="ad"><a href="/ad/{i}">Offer {i}</a></div>' for i in range(120)]
    second = [f"<p>{PARAGRAPH.format(f'Second {i}.')}</p>" for i in range(15)]
    footer = [f'<li><a href="/f/{i}">Footer {i}</a></li>' for i in range(150)]
    page = "\n".join(["<html><body><ul>", *menu, "</ul>", *first, *fold, *second, "<ul>"])
    page += "\n".join([*footer, "</ul></body></html>"])
    text = selected_text(cetr.select(tree_of(page)))
    assert all(f"First {i}." in text and f"Second {i}." in text for i in range(15))
    kept = [i for i in range(120) if f"Offer {i}\n" in text + "\n"]
    # Smoothing blurs the fold's edges into the story; its middle is never content.
    assert len(kept) < 60 and not set(kept) & set(range(50, 70))


def test_output_keeps_block_structure_and_word_boundaries() -> None:
    page = news_page(content_lines=5).replace("<div>\n<p>", "<div>\n<h2>Road closed</h2>\n<p>", 1)
    selection = cetr.select(tree_of(page))
    kinds = {kind for kind, _ in selection.blocks}
    assert "heading" in kinds and "paragraph" in kinds
    paragraph = next(text for kind, text in selection.blocks if "Paragraph 0." in text)
    assert paragraph == PARAGRAPH.format("Paragraph 0.")


def test_selection_never_modifies_the_tree() -> None:
    from lxml import etree

    tree = tree_of(news_page())
    before = etree.tostring(tree)
    for variant in cetr.Variant:
        cetr.select(tree, variant=variant)
    assert etree.tostring(tree) == before
