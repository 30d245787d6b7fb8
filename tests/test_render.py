"""`jaxatari.render.save_video`: GIFs with the frames' exact colours and
playing time, MP4s with every frame, clear errors for bad input."""
import cv2
import numpy as np
import pytest
from PIL import Image

from jaxatari import render


def _frames(count: int, seed: int = 0) -> np.ndarray:
    """Atari-like frames: few colours, some runs of identical frames."""
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, (12, 3), dtype=np.uint8)
    frames = colours[rng.integers(0, 12, (count, 21, 16))]
    frames[3] = frames[2]                         # a run of two
    return np.repeat(np.repeat(frames, 10, axis=1), 10, axis=2)


def _gif(path) -> tuple[list[np.ndarray], list[int]]:
    image, frames, durations = Image.open(path), [], []
    for k in range(image.n_frames):
        image.seek(k)
        frames.append(np.asarray(image.convert("RGB")))
        durations.append(image.info["duration"])
    return frames, durations


def test_gif_keeps_exact_colours_and_playing_time(tmp_path):
    frames = _frames(9)
    path = render.save_video(frames, tmp_path / "run.gif", fps=20)
    shown, durations = _gif(path)
    assert len(shown) == render.gif_frame_count(frames) == 8
    kept = [0, 1, 2, 4, 5, 6, 7, 8]               # frame 3 repeats 2
    for image, k in zip(shown, kept):
        np.testing.assert_array_equal(image, frames[k])
    assert durations[2] == 100 and sum(durations) == 9 * 50


def test_gif_of_gray_and_many_colours(tmp_path):
    gray = np.arange(2 * 8 * 8, dtype=np.uint8).reshape(2, 8, 8)
    shown, _ = _gif(render.save_video(gray, tmp_path / "gray.gif"))
    np.testing.assert_array_equal(shown[1][..., 0], gray[1])
    rng = np.random.default_rng(1)
    noisy = rng.integers(0, 256, (2, 40, 40, 3), dtype=np.uint8)
    shown, _ = _gif(render.save_video(noisy, tmp_path / "noisy.gif"))
    assert len(shown) == 2 and shown[0].shape == (40, 40, 3)  # quantized


def test_mp4_has_every_frame(tmp_path):
    frames = _frames(7)
    path = render.save_video(frames, tmp_path / "run.mp4", fps=15)
    capture, count = cv2.VideoCapture(str(path)), 0
    while True:
        ok, image = capture.read()
        if not ok:
            break
        assert image.shape == frames[0].shape
        count += 1
    assert count == 7


@pytest.mark.parametrize("frames, path, match", [
    (np.zeros((2, 8, 8, 4), np.uint8), "x.gif", "must be"),
    (np.zeros((0, 8, 8, 3), np.uint8), "x.gif", "T >= 1"),
    (np.zeros((2, 8, 8, 3), np.float32), "x.gif", "uint8"),
    (np.zeros((2, 8, 8, 3), np.uint8), "x.png", ".gif or .mp4"),
])
def test_bad_input_is_a_clear_error(tmp_path, frames, path, match):
    with pytest.raises(ValueError, match=match):
        render.save_video(frames, tmp_path / path)
