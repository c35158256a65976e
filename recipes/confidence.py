"""Choose the "unlike the captions" threshold: mean log-probability per target token of the shipped
model's own translations, on every Multi30k val caption against German sentences from other domains.

    python recipes/confidence.py [--checkpoint checkpoints/de-en] [--data-dir ../shared/data/multi30k]

Prints both distributions, the threshold (a low percentile of val) and how many sentences of each
set fall below it. training_data/confidence.py holds the chosen value.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import data  # noqa: E402
from lens.explain import DecodingOptions, explain_batch  # noqa: E402
from training_data.confidence import UNFAMILIAR_BELOW, mean_log_prob  # noqa: E402
from translation import Translator  # noqa: E402

# Written for this benchmark: news, travel, business, science, chat, instructions. None of it
# describes a photo, which is all the model has seen.
OUT_OF_DOMAIN = [
    "Der Zug hat wegen eines Unfalls zwei Stunden Verspätung.",
    "Ich möchte ein Bier.",
    "Die Bundesregierung hat gestern ein neues Gesetz zur Rente beschlossen.",
    "Können Sie mir bitte sagen, wie spät es ist?",
    "Die Inflation ist im letzten Quartal deutlich gestiegen.",
    "Bitte schalten Sie Ihr Mobiltelefon während des Fluges aus.",
    "Mein Computer startet nach dem Update nicht mehr.",
    "Die Aktie verlor nach der Bekanntgabe der Zahlen zehn Prozent.",
    "Wir müssen das Meeting auf nächsten Dienstag verschieben.",
    "Der Arzt hat mir Antibiotika gegen die Entzündung verschrieben.",
    "Das Finanzamt verlangt eine Nachzahlung der Steuern.",
    "Die Quantenmechanik beschreibt das Verhalten kleinster Teilchen.",
    "Hast du schon deine Hausaufgaben gemacht?",
    "Der Vertrag verlängert sich automatisch um ein Jahr.",
    "Wegen des Streiks fallen morgen alle Flüge aus.",
    "Ich habe meinen Schlüssel verloren und komme nicht in die Wohnung.",
    "Die Europäische Zentralbank senkt den Leitzins.",
    "Das Passwort muss mindestens zwölf Zeichen enthalten.",
    "Entschuldigung, wo ist die nächste Apotheke?",
    "Die Wahlbeteiligung lag bei knapp siebzig Prozent.",
    "Bitte überweisen Sie den Betrag bis Ende des Monats.",
    "Der Bundestag debattiert über den Haushalt.",
    "Ich bin seit drei Tagen erkältet.",
    "Die Software speichert alle Daten verschlüsselt in der Cloud.",
    "Wie viel kostet eine Fahrkarte nach Berlin?",
    "Die Forscher haben einen neuen Impfstoff entwickelt.",
    "Kannst du mich morgen vom Bahnhof abholen?",
    "Der Kunde hat die Rechnung noch nicht bezahlt.",
    "Unsere Firma sucht ab sofort einen erfahrenen Programmierer.",
    "Das Gericht hat die Klage abgewiesen.",
    "Ich finde, dass die Steuern zu hoch sind.",
    "Die Heizung ist kaputt, und der Vermieter reagiert nicht.",
    "Nach der Operation muss er zwei Wochen im Krankenhaus bleiben.",
    "Das Wetter soll am Wochenende schlechter werden.",
    "Die Verhandlungen über den Tarifvertrag sind gescheitert.",
    "Ich hätte gern einen Tisch für zwei Personen um acht Uhr.",
    "Die Festplatte ist voll, bitte lösche alte Dateien.",
    "Der Minister trat nach dem Skandal zurück.",
    "Mathematik war nie mein Lieblingsfach.",
    "Wir danken Ihnen für Ihr Vertrauen und Ihre Geduld.",
]


def scores(translator: Translator, sentences: list[str], options: DecodingOptions, batch: int = 64) -> np.ndarray:
    values = []
    for start in range(0, len(sentences), batch):
        for sentence in explain_batch(translator, sentences[start : start + batch], options):
            values.append(mean_log_prob(sentence.explanation.target_probs))
            PROBS.append(sentence.explanation.target_probs)
    return np.array(values)


PROBS: list = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--num-beams", type=int, default=4)
    parser.add_argument("--percentile", type=float, default=5.0, help="val captions allowed below the threshold")
    args = parser.parse_args()

    translator = Translator.from_pretrained(args.checkpoint, device="cpu")
    val = data.load_split(data.find_corpus(args.data_dir), "val").src
    options = DecodingOptions(num_beams=args.num_beams, length_penalty=1.0, max_new_tokens=128)
    start = time.perf_counter()
    val_scores, ood_scores = scores(translator, val, options), scores(translator, OUT_OF_DOMAIN, options)
    print(
        f"{len(val)} val captions and {len(OUT_OF_DOMAIN)} out-of-domain sentences, beam {args.num_beams}, "
        f"{time.perf_counter() - start:.0f} s"
    )
    for name, values in (("val", val_scores), ("out of domain", ood_scores)):
        q = np.percentile(values, [1, 2, 5, 25, 50, 75, 95])
        print(
            f"   {name:14s} mean log-prob per token: percentiles 1/2/5/25/50/75/95 = " + " ".join(f"{v:.3f}" for v in q)
        )
    chosen = float(np.percentile(val_scores, args.percentile))
    for label, threshold in (
        (f"{args.percentile:g}th percentile of val", chosen),
        ("training_data/confidence.py", UNFAMILIAR_BELOW),
    ):
        print(
            f"   threshold {threshold:.3f} ({label}): val flagged {np.mean(val_scores < threshold):.1%} "
            f"({int(np.sum(val_scores < threshold))}/{len(val_scores)}), out-of-domain flagged "
            f"{np.mean(ood_scores < threshold):.1%} ({int(np.sum(ood_scores < threshold))}/{len(ood_scores)})"
        )
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "confidence.npz", val=val_scores, ood=ood_scores, probs=np.array(PROBS, dtype=object))
    for i in np.argsort(ood_scores):
        print(
            f"      {ood_scores[i]:7.3f} {'flagged' if ood_scores[i] < UNFAMILIAR_BELOW else 'MISSED '} {OUT_OF_DOMAIN[i]}"
        )
    order = np.argsort(ood_scores)
    print(
        "   out-of-domain sentences the threshold misses:",
        [OUT_OF_DOMAIN[i] for i in order if ood_scores[i] >= UNFAMILIAR_BELOW],
    )


if __name__ == "__main__":
    main()
