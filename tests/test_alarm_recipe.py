"""recipes/alarm.py: the rule is chosen within the captions' false-alarm budget on one half of the dev sets, and
reported on the other half it never saw."""

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "alarm_recipe", Path(__file__).resolve().parent.parent / "recipes" / "alarm.py"
)
alarm_recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(alarm_recipe)


def row(mean_log_prob: float, chrf: float) -> dict:
    return {"mean_log_prob": mean_log_prob, "counts": [500, 500, 500], "unseen_pairs": 0.0, "chrf": chrf}


def test_the_rule_keeps_the_budget_and_its_held_out_report_measures_what_it_did_not_see():
    captions = [row(-0.2 - 0.001 * i, 60.0) for i in range(100)]  # sure and well translated
    everyday = [row(-1.0, 15.0) if i % 3 else row(-0.3, 55.0) for i in range(60)]  # unsure ones are bad
    rule, report = alarm_recipe.choose(captions[0::2], everyday[0::2])
    assert report["val_alarm_rate"] <= alarm_recipe.MAX_VAL_ALARMS and report["bad_translations_caught"] == 1.0
    held = alarm_recipe.held_out(rule, captions[1::2], everyday[1::2])
    assert held["val_alarm_rate"] == 0.0 and held["chrf_gap"] == 40.0
    assert abs(held["everyday_alarm_rate"] - 20 / 30) < 1e-9
