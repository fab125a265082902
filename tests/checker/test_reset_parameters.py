"""A model's `fn reset_parameters(mut self, seed: Int)`, which `init` runs
(torch's `reset_parameters()` at the end of `__init__`): one E0944 at its
name for each way it cannot be run so."""

from __future__ import annotations

from functools import partial

from annotations import check_annotated

annotated = partial(check_annotated, dedent=True)


def test_the_form_init_runs_checks_clean() -> None:
    annotated(
        """
        model Lin:
            param w: [4 2] = zeros

            fn reset_parameters(mut self, seed: Int):
                for name, p in named_params(self, seed=seed):
                    if ndim(p) > 1:
                        p.init(xavier_uniform())
        """
    )


def test_each_other_form_is_one_error_at_its_name() -> None:
    annotated(
        """
        model A:
            param w: [4 2] = zeros

            fn reset_parameters(mut self):
        #      ^^^^^^^^^^^^^^^^ E0944: model A's reset_parameters is run by init as fn reset_parameters(mut self, seed: Int): it takes nothing after self, not one Int seed
                pass

        model B:
            param w: [4 2] = zeros

            fn reset_parameters(self, seed: Int):
        #      ^^^^^^^^^^^^^^^^ E0944: model B's reset_parameters is run by init as fn reset_parameters(mut self, seed: Int): its self is not mut (it writes the model's params)
                pass

        model C:
            param w: [4 2] = zeros

            fn reset_parameters(mut self, seed: Int) -> Int:
        #      ^^^^^^^^^^^^^^^^ E0944: model C's reset_parameters is run by init as fn reset_parameters(mut self, seed: Int): it returns Int, not nothing
                return seed

        model D[I]:
            param w: [I 2] = zeros

            fn reset_parameters(mut self, seed: Float, scale: Float):
        #      ^^^^^^^^^^^^^^^^ E0944: model D's reset_parameters is run by init as fn reset_parameters(mut self, seed: Int): it takes seed: Float, scale: Float after self, not one Int seed
                pass
        """
    )


def test_another_method_name_is_not_run_by_init() -> None:
    annotated(
        """
        model Lin:
            param w: [4 2] = zeros

            fn reset(self) -> [4 2]:
                return self.w
        """
    )
