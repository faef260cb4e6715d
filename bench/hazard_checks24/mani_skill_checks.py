"""mani-skill 3.0.1: the three proven findings of `inplacefix check` on main 97a004a (stop 52, fresh52). mani_skill
imports sapien (a simulator) at the package level, so each flagged function is compiled alone from the shipped
file (`Class.method` as a plain function called with a stand-in `self`).

- agents/controllers/pd_ee_pose.py:233 (`PDEEPoseController._clip_and_scale_action`): `rot_norm =
  torch.linalg.norm(rot_action, axis=1)` (saves rot_action, its input), then `rot_action[rot_norm > 1] =
  torch.mul(rot_action, 1 / rot_norm[:, None])[...]`. An action requiring grad (a policy's output handed on
  undetached) raises at backward: real by this file's convention (ManiSkill's envs take actions without grad).
  `gym_utils.clip_and_scale_action` (torch only) is compiled from its file too.
- utils/common.py:280 (`normalize_vector`): `norm = torch.linalg.norm(x, axis=1)` (saves its output), then
  `norm[norm < eps] = 1`: raises with x requiring grad; real by this file's convention.
- envs/tasks/dexterity/rotate_single_object_in_hand.py:170 (`RotateSingleObjectInHand._initialize_actors`):
  `new_pos = torch.randn((b, 3)) * self.obj_init_pos_noise`, then `new_pos[:, 2] = torch.abs(new_pos[:, 2]) +
  ...`; abs saves the view of new_pos. But obj_init_pos_noise is a float constructor parameter (default 0.02,
  the level classes pass 0.02), hand_init_height a class float, obj_heights `common.to_tensor` of a list of floats:
  nothing requires grad, so abs records nothing, and the new pose goes to the simulator (`set_pose`). False:
  the check reads the constructor parameter as requiring grad (label51c's init-param-operand group). The method
  is stopped after `self.obj.set_pose(new_pose)` (line 178)."""

import _shim  # noqa: F401
import linecache
import types

import numpy as np
import torch
import torch.nn.functional as F
from _check import attempt
from _fresh52 import compile_alone, src

PD = src("mani_skill/agents/controllers/pd_ee_pose.py")
GYM = src("mani_skill/utils/gym_utils.py")
COMMON = src("mani_skill/utils/common.py")
ROT = src("mani_skill/envs/tasks/dexterity/rotate_single_object_in_hand.py")
assert linecache.getline(PD, 232).strip() == "rot_norm = torch.linalg.norm(rot_action, axis=1)"
assert linecache.getline(PD, 233).strip() == "rot_action[rot_norm > 1] = torch.mul(rot_action, 1 / rot_norm[:, None])["
assert linecache.getline(COMMON, 280).strip() == "norm[norm < eps] = 1"
assert linecache.getline(ROT, 168).strip() == "new_pos = torch.randn((b, 3)) * self.obj_init_pos_noise"
assert linecache.getline(ROT, 170).strip() == "new_pos[:, 2] = ("
assert linecache.getline(ROT, 178).strip() == "self.obj.set_pose(new_pose)"

gym_utils = types.SimpleNamespace(**compile_alone(GYM, {"clip_and_scale_action"}, {"torch": torch}))


def pd_run(replace):
    def go():
        ns = compile_alone(PD, {"PDEEPoseController._clip_and_scale_action"}, {"torch": torch, "np": np,
                                                                                "gym_utils": gym_utils}, replace=replace)
        me = types.SimpleNamespace(action_space_low=-torch.ones(6), action_space_high=torch.ones(6),
                                   config=types.SimpleNamespace(rot_lower=-2 * np.pi))
        action = torch.tensor([[0.1, 0.2, 0.3, 0.9, 0.9, 0.9], [0.1, 0.2, 0.3, 0.1, 0.1, 0.1]], requires_grad=True)
        ns["_clip_and_scale_action"](me, action).sum().backward()
    return go


F233 = "mani_skill/agents/controllers/pd_ee_pose.py:233:IPF104"
attempt(F233, "path", "_clip_and_scale_action(an action requiring grad, one rotation of norm > 1), backward",
        pd_run({}))
attempt(F233, "control", "line 233 as torch.where out of place",
        pd_run({233: "rot_action = torch.where((rot_norm > 1)[:, None], torch.mul(rot_action, 1 / rot_norm[:, None]), rot_action)"}))


def norm_run(replace):
    def go():
        ns = compile_alone(COMMON, {"normalize_vector"}, {"torch": torch}, replace=replace)
        x = torch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
        ns["normalize_vector"](x).sum().backward()
    return go


F280 = "mani_skill/utils/common.py:280:IPF104"
attempt(F280, "path", "normalize_vector(x requiring grad, a zero row), backward", norm_run({}))
attempt(F280, "control", "line 280 as masked_fill out of place", norm_run({280: "norm = norm.masked_fill(norm < eps, 1)"}))


class _Obj:
    def set_pose(self, pose):
        self.pose = pose


def rot_run(noise, backward):
    def go():
        ns = compile_alone(ROT, {"RotateSingleObjectInHand._initialize_actors"}, {"torch": torch, "F": F},
                           replace={178: "self.obj.set_pose(new_pose)\nreturn locals()"})
        me = types.SimpleNamespace(device="cpu", table_scene=types.SimpleNamespace(initialize=lambda idx: None),
                                   obj_init_pos_noise=noise, hand_init_height=0.25, obj=_Obj(),
                                   obj_heights=torch.tensor([0.03, 0.04], dtype=torch.float32))
        ns["_initialize_actors"](me, torch.arange(2))
        if backward:
            me.obj.pose.sum().backward()
        else:
            assert not me.obj.pose.requires_grad  # no graph: nothing can backpropagate through the write
    return go


F170 = "mani_skill/envs/tasks/dexterity/rotate_single_object_in_hand.py:170:IPF104"
attempt(F170, "path", "_initialize_actors as the env builds it (obj_init_pos_noise=0.02, heights a float tensor) "
        "with grad on, stopped after set_pose: the pose requires no grad", rot_run(0.02, False))
attempt(F170, "context", "obj_init_pos_noise a tensor requiring grad (never so in mani_skill), backward of the "
        "pose: raises", rot_run(torch.tensor(0.02, requires_grad=True), True))
