"""The texts of Quiver's own library (library/*.qv), for tests that check
examples importing it through the pure checker (`check_example(..., library=)`)."""

from __future__ import annotations

from pathlib import Path

LIBRARY_FOLDER = Path(__file__).resolve().parents[1] / "library"
LIBRARY = {p.name: p.read_text(encoding="utf-8") for p in sorted(LIBRARY_FOLDER.glob("*.qv"))}

# A small program through `import nn` (a model of nn.Linear layers, a layer
# made and called in main), for the editor tests of the checker and the server.
NN_USER_PROGRAM = """\
import nn

dim D = 4
dim H = 8
dim C = 3

model Mlp:
    param fc1: nn.Linear[D, H]
    param fc2: nn.Linear[H, C, bias=False]

    fn forward(self, x: [b D]) -> [b C]:
        return self.fc2(relu(self.fc1(x)))

fn main():
    fc = nn.Linear[D, H].init(seed=0)
    y = fc.forward(ones([2 D]))
    m = Mlp.init(seed=1)
    print(y, m(ones([2 D])))
"""
