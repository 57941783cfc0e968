"""The figure of ``dlhack bench scaling`` (dlhack.bench.scaling_plot): a PNG with a bar for
every run and the efficiency lines, from the tables the bench writes."""
import matplotlib.image

from dlhack.bench.scaling_plot import plot
from dlhack.step_profile import PHASES


def table(efficiency, of_ceiling=None):
    figures = {"efficiency": efficiency, "breakdown_ms": dict.fromkeys(PHASES, 5.0)}
    if of_ceiling is not None:
        figures["of_ceiling"] = of_ceiling
    return figures


def test_plot_writes_both_panels(tmp_path):
    path = tmp_path / "scaling.png"
    plot({"1": table(1.0), "2": table(0.95, 0.98)}, {"2": table(0.97)},
         {"2": table(0.93, 0.96)}, path)
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 2 * image.shape[0]  # two panels abreast
    assert image[..., :3].std() > 0.05  # something was drawn
