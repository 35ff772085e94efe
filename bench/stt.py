"""Real-time factor of voice-message transcription on this machine (faster-whisper, CPU, int8, VAD on).

Speaks English text with espeak-ng, cuts 5 s and 30 s clips, re-encodes them as OGG/Opus like a
Discord voice message, and times ``WhisperTranscriber.transcribe`` (decode + VAD + inference) on each.
RTF = processing seconds / audio seconds; below 1 is faster than real time.

    .venv/bin/python bench/stt.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatcontext.voice.engine.transcribe import WhisperTranscriber  # noqa: E402

CLIP_SECONDS = (5, 30)
TEXT = (
    "Good morning everyone. This is a quick voice message about the community event on the weekend. "
    "We are meeting at the park near the library after lunch, and we will walk to the lake together. "
    "Please bring water, a hat and something to share. If the weather turns bad we will move inside "
    "to the big hall, where there is space for games and music. The organisers would like to thank "
    "everybody who helped last time, and they hope to see many new faces. Send a message in the "
    "channel if you have questions, and remember to check the pinned notes before you leave home."
)


def speak(text: str, path: Path) -> Path:
    if shutil.which("espeak-ng") is None:
        sys.exit("espeak-ng is not installed: run `make system-deps` (apt-get install espeak-ng)")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
    return path


def cut(source: Path, seconds: int, target: Path) -> Path:
    with wave.open(str(source), "rb") as src:
        frames_needed = src.getframerate() * seconds
        if src.getnframes() < frames_needed:
            sys.exit(f"speech is shorter than {seconds}s; lengthen TEXT")
        params = src.getparams()
        frames = src.readframes(frames_needed)
    with wave.open(str(target), "wb") as out:
        out.setparams(params)
        out.writeframes(frames)
    return target


def to_ogg_opus(wav: Path, ogg: Path) -> Path:
    import av

    with av.open(str(wav)) as source, av.open(str(ogg), "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=48000, layout="mono")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in [*source.decode(source.streams.audio[0]), None]:
            for resampled in resampler.resample(frame):
                for packet in stream.encode(resampled):
                    target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    return ogg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per clip (median reported)")
    args = parser.parse_args()

    transcriber = WhisperTranscriber()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        speech = speak(TEXT, work / "speech.wav")
        clips = {s: to_ogg_opus(cut(speech, s, work / f"clip{s}.wav"), work / f"clip{s}.ogg") for s in CLIP_SECONDS}

        started = time.perf_counter()
        transcriber.model()
        load_s = time.perf_counter() - started
        transcriber.transcribe(clips[CLIP_SECONDS[0]].read_bytes())  # warm-up, not timed

        print(f"model: {transcriber.directory} (CPU, {transcriber.compute_type}, VAD on)")
        print(f"cpus: {os.cpu_count()}  model load: {load_s:.2f}s  runs per clip: {args.runs}")
        print(f"{'clip':>6} {'median s':>9} {'min s':>7} {'RTF':>6}  transcript (start)")
        for seconds, path in clips.items():
            audio = path.read_bytes()
            timings = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                result = transcriber.transcribe(audio)
                timings.append(time.perf_counter() - t0)
            median = statistics.median(timings)
            print(f"{seconds:>5}s {median:>9.2f} {min(timings):>7.2f} {median / seconds:>6.3f}  {result.text[:50]!r}")


if __name__ == "__main__":
    main()
