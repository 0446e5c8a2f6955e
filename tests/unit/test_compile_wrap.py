"""The compile-time wrap (compile_checks.py) without Spark or a dbt project: installed once, it
checks only window_view models of a window_views project, after dbt compiled them."""

from types import SimpleNamespace

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.window_views import compile_checks

BAD = "select ts, lag(price) over (order by seq) as p from s.ticks"


STREAMING = {"execution": "streaming", "watermark": {"column": "ts"}}


def node(materialized="window_view", sql=BAD, config=STREAMING):
    cfg = {"materialized": materialized, **config}
    return SimpleNamespace(
        name="m",
        resource_type="model",
        original_file_path="models/m.sql",
        compiled_code=sql,
        config=SimpleNamespace(materialized=materialized, to_dict=lambda omit_none=True: cfg),
        depends_on=SimpleNamespace(nodes=[]),
    )


def compiler(adapter_type="window_views"):
    return SimpleNamespace(config=SimpleNamespace(credentials=SimpleNamespace(type=adapter_type)))


def test_installed_once_when_the_plugin_loads():
    from dbt.compilation import Compiler

    import dbt.adapters.window_views  # noqa: F401  (loading the plugin installs the wrap)

    wrapped = Compiler.compile_node
    assert getattr(wrapped, compile_checks._MARK)
    assert compile_checks.install() and Compiler.compile_node is wrapped


def test_a_bad_model_is_a_compilation_error_naming_it():
    with pytest.raises(CompilationError) as err:
        compile_checks.check_node(compiler(), node(), SimpleNamespace(nodes={}, sources={}))
    assert str(err.value).startswith(
        "Compilation Error in model m (models/m.sql)\n  window_view model 'm': `LAG(price)"
    )


@pytest.mark.parametrize("checked", [node(materialized="table", config={}), node(sql=None)])
def test_other_nodes_are_not_checked(checked):
    compile_checks.check_node(compiler(), checked, None)


@pytest.mark.parametrize(
    "key, value", [("emit", "on_window_close"), ("watermark", {"column": "ts"}), ("late_data", "drop")]
)
def test_window_view_keys_on_another_materialization_are_refused(key, value):
    with pytest.raises(CompilationError) as err:
        compile_checks.check_node(compiler(), node(materialized="table", config={key: value}), None)
    assert str(err.value).startswith(
        f"Compilation Error in model m (models/m.sql)\n  model 'm': config '{key}' only applies to "
        f"materialized='window_view', and this model is materialized='table'; fix: set materialized='window_view', "
        f"or remove '{key}'"
    )


def test_other_adapters_are_not_checked():
    compile_checks.check_node(compiler("spark"), node(), None)
