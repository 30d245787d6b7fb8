"""Pictures: RGB frames written as an animated GIF or an MP4 video.

The frames are what the env's screen shows (`AtariEnv.screen_rgb`,
uint8[rows, 160, 3]), or any uint8 frames of one shape, RGB or gray.

* **GIF** (Pillow): an Atari frame has at most 128 colours, so a video with
  at most 256 colours is written with its exact colours (one global
  palette); more colours are quantized by Pillow. Like every GIF encoder,
  Pillow stores a run of identical consecutive frames as one frame shown
  for the run's total time, so a GIF may hold fewer frames than it was
  given while playing for as long (`gif_frame_count` tells how many).
  GIF delays are whole hundredths of a second, so the frame time is
  rounded to 10 ms (15 fps plays at 70 ms a frame).
* **MP4** (OpenCV's `VideoWriter`, codec `mp4v`, in the `video` extra):
  lossy, every frame kept.
"""
from __future__ import annotations

import os
import pathlib
from typing import Sequence

import numpy as np

ALE_FPS = 60.0
"""The 2600's frame rate (NTSC) as ALE plays it: a step of frameskip k
lasts k / 60 seconds."""


def _as_frames(frames: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    """uint8[T, H, W, 3] from RGB or gray frames; a clear error otherwise."""
    array = np.asarray(frames)
    if array.ndim == 3:                      # gray [T, H, W]
        array = np.repeat(array[..., None], 3, axis=-1)
    if array.ndim != 4 or array.shape[-1] != 3 or len(array) == 0:
        raise ValueError(f"frames must be [T, H, W, 3] (RGB) or [T, H, W] "
                         f"(gray) with T >= 1, got shape {array.shape}")
    if array.dtype != np.uint8:
        raise ValueError(f"frames must be uint8, got {array.dtype}")
    return array


def _gif_palette_images(frames: np.ndarray):
    """Pillow 'P' images with the video's exact colours (at most 256)."""
    from PIL import Image
    colours, index = np.unique(frames.reshape(-1, 3), axis=0,
                               return_inverse=True)
    if len(colours) > 256:
        return [Image.fromarray(frame).quantize(256) for frame in frames]
    palette = np.zeros((256, 3), np.uint8)
    palette[:len(colours)] = colours
    index = index.reshape(frames.shape[:3]).astype(np.uint8)
    images = []
    for frame in index:
        image = Image.fromarray(frame, mode="P")
        image.putpalette(palette.reshape(-1).tolist())
        images.append(image)
    return images


def _write_gif(frames: np.ndarray, path: pathlib.Path, fps: float) -> None:
    images = _gif_palette_images(frames)
    images[0].save(path, save_all=True, append_images=images[1:],
                   duration=10 * max(round(100 / fps), 1), loop=0, optimize=False)


def _write_mp4(frames: np.ndarray, path: pathlib.Path, fps: float) -> None:
    try:
        import cv2
    except ImportError as error:
        raise ImportError("MP4 needs OpenCV: pip install 'jaxatari[video]'"
                          " (or write a .gif)") from error
    height, width = frames.shape[1:3]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"),
                             fps, (width, height))
    if not writer.isOpened():
        raise OSError(f"OpenCV could not open an MP4 writer for {path}")
    for frame in frames:
        writer.write(np.ascontiguousarray(frame[..., ::-1]))  # RGB -> BGR
    writer.release()


def save_video(frames: np.ndarray | Sequence[np.ndarray],
               path: str | os.PathLike, fps: float = ALE_FPS / 4
               ) -> pathlib.Path:
    """Writes frames as a GIF or an MP4, chosen by the path's suffix.

    Args:
        frames: uint8[T, H, W, 3] RGB frames (or [T, H, W] gray), e.g. a
            rollout's `env.screen_rgb(state)`s; a JAX array is fine.
        path: where to write: `.gif` or `.mp4`.
        fps: frames per second; the default, 15, is real time for one
            frame per step at frameskip 4.

    Returns:
        The path written.

    Raises:
        ValueError: frames of the wrong shape or type, a bad fps, or a
            suffix other than .gif and .mp4.
    """
    path = pathlib.Path(path)
    writers = {".gif": _write_gif, ".mp4": _write_mp4}
    if path.suffix.lower() not in writers:
        raise ValueError(f"save_video writes .gif or .mp4, got {path.name!r}")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    writers[path.suffix.lower()](_as_frames(frames), path, float(fps))
    return path


def gif_frame_count(frames: np.ndarray | Sequence[np.ndarray]) -> int:
    """How many frames `save_video` stores in a GIF of these frames: one per
    run of identical consecutive frames."""
    array = _as_frames(frames)
    changed = (array[1:] != array[:-1]).reshape(len(array) - 1, -1).any(1)
    return 1 + int(changed.sum())
