# Library module for case 3205 (shared: the fix does not touch it): microsoft/archai,
# archai/discrete_search/search_spaces/config/arch_config.py at the parent of commit dc356bcd. Written anew at small
# size: ArchConfig (nodes built from a sampled config dictionary, `pick` records the parameters used),
# ArchConfigList (a "config_list" node with `_configs` / `_repeat_times`, indexable and iterable) and
# build_arch_config follow the source. Left out: the JSON / YAML export, `to_dict`, and the ArchParamTree that samples
# such dictionaries (the case writes one sampled dictionary by hand).
from collections import OrderedDict
from copy import deepcopy
from typing import Any, Dict, Optional, Union


def build_arch_config(config_dict: Dict[str, Any]) -> "ArchConfig":
    ARCH_CONFIGS = {"default": ArchConfig, "config_list": ArchConfigList}

    config_type = config_dict.get("_config_type", "default")
    return ARCH_CONFIGS[config_type](config_dict)


class ArchConfig:
    """Store architecture configs."""

    def __init__(self, config_dict: Dict[str, Union[dict, float, int, str]]) -> None:
        # Set that stores all parameters used to build the model instance
        self._used_params = set()
        # Original config dictionary
        self._config_dict = deepcopy(config_dict)
        # ArchConfig nodes
        self.nodes = OrderedDict()
        for param_name, param in self._config_dict.items():
            if isinstance(param, dict):
                self.nodes[param_name] = build_arch_config(param)
            else:
                self.nodes[param_name] = param

    def pick(self, param_name: str, record_usage: Optional[bool] = True) -> Any:
        param_value = self.nodes[param_name]
        if record_usage:
            self._used_params.add(param_name)
        return param_value


class ArchConfigList(ArchConfig):
    """Store a list of architecture configs."""

    def __init__(self, config: OrderedDict):
        super().__init__(config)
        assert "_configs" in config
        assert "_repeat_times" in config
        self.max_size = config["_repeat_times"]

    def __len__(self) -> int:
        self._used_params.add("_repeat_times")
        return self.max_size

    def __getitem__(self, idx: int) -> ArchConfig:
        if 0 <= idx < len(self):
            self._used_params.add("_repeat_times")
            return self.nodes["_configs"].pick(str(idx))
        raise IndexError

    def __iter__(self):
        yield from [self[i] for i in range(len(self))]

    def pick(self, param_name: str, record_usage: Optional[bool] = True) -> None:
        raise ValueError("Attempted to use .pick in an ArchConfigList instance. "
                         "Select a config first using indexing (e.g `config_list[i]`).")
