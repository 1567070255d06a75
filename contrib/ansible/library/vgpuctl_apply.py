#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-2.0-or-later
# GNU General Public License version 2 or (at your option) any later version, which
# includes version 3, Ansible's (see https://www.gnu.org/licenses/gpl-3.0.txt).
# Ansible module over `vgpuctl apply`: plan with `apply --dry-run --json`, then apply.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: vgpuctl_apply
short_description: Bring an NVIDIA vGPU host to a vgpuctl host configuration
version_added: "1.0.0"
description:
  - Runs C(vgpuctl apply) on the managed host for one label of a host configuration file,
    NVIDIA's mig-parted C(mig-configs) and vgpu-device-manager C(vgpu-configs) YAML plus
    vgpuctl's C(start-domains). It makes MIG mode, SR-IOV VFs, GPU instances, mixed-size
    mode, vGPUs and domains match the label, in that order.
  - The module first asks vgpuctl for its plan (C(vgpuctl apply --dry-run --json)). When the
    plan is empty the host already matches and nothing runs; otherwise the real
    C(vgpuctl apply) runs with the same arguments.
  - vgpuctl reads and writes the sysfs of the host it runs on, so the module must run on the
    hypervisor itself (not delegated to the controller).
  - Runs as root on a real host (C(become) or C(ansible_user=root)).
options:
  config:
    description:
      - Path of the host configuration file on the managed host, as C(vgpuctl apply -f) takes it.
    type: path
    required: true
  label:
    description:
      - The configuration label in I(config) to apply (C(vgpuctl apply --config)).
    type: str
    required: true
  sysroot:
    description:
      - Read C(sys/) and C(proc/) below this directory instead of C(/) (C(vgpuctl --sysroot)).
      - For captured host trees and tests; leave it out on a real host.
    type: path
  vgpuctl:
    description:
      - Path of the vgpuctl binary.
      - By default C(vgpuctl) is looked up in C(PATH) and the usual C(sbin) directories.
    type: path
  connect:
    description:
      - libvirt connection URI for the domains the label starts, given as the global
        C(vgpuctl -c URI).
      - Default as vgpuctl's own (C($LIBVIRT_DEFAULT_URI), else C(qemu:///system)).
    type: str
  nvidia_smi:
    description:
      - Path of C(nvidia-smi) (C(vgpuctl apply --nvidia-smi)); vgpuctl's default otherwise.
    type: path
  sriov_manage:
    description:
      - Path of NVIDIA's C(sriov-manage) (C(vgpuctl apply --sriov-manage)); vgpuctl's default
        otherwise.
    type: path
  nvml:
    description:
      - NVIDIA's management library to load (the global C(vgpuctl --nvml LIB)).
    type: str
attributes:
  check_mode:
    description: Can run in check mode and report whether the host would change.
    support: full
  diff_mode:
    description: The diff shows the steps vgpuctl planned, one per line.
    support: full
  platform:
    description: Linux KVM/libvirt hosts with NVIDIA's vGPU Manager.
    support: full
    platforms: posix
notes:
  - I(changed) is true exactly when vgpuctl planned at least one step, that is when the host
    was changed (or, in check mode, would be).
  - In check mode only the dry run runs; vgpuctl's dry run changes nothing.
  - A failure carries vgpuctl's own message (its C(vgpuctl:) lines on stderr) in I(msg).
  - The C(vgpuctl-apply@LABEL.service) unit applies the same label at boot; this module does
    not enable it.
requirements:
  - vgpuctl with C(apply --dry-run --json) on the managed host
seealso:
  - module: vgpuctl_facts
author:
  - vgpuctl maintainers (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Apply label l40s-8q of /etc/vgpuctl/host.yaml
  vgpuctl_apply:
    config: /etc/vgpuctl/host.yaml
    label: l40s-8q

- name: Apply, with the NVIDIA tools in non-default places and domains on another URI
  vgpuctl_apply:
    config: /etc/vgpuctl/host.yaml
    label: "{{ vgpuctl_label }}"
    vgpuctl: /usr/local/sbin/vgpuctl
    nvidia_smi: /opt/nvidia/bin/nvidia-smi
    sriov_manage: /opt/nvidia/lib/sriov-manage
    connect: qemu:///system
  register: applied

- name: Show what was done
  ansible.builtin.debug:
    var: applied.steps
'''

RETURN = r'''
steps:
  description: The steps vgpuctl planned (and, unless in check mode, carried out), in order.
  returned: success
  type: list
  elements: str
  sample:
    - "create vGPU L40S-8Q (type 1151) on VF 0000:c1:00.4"
    - "create vGPU L40S-8Q (type 1151) on VF 0000:c1:00.5"
plan:
  description:
    - The plan as vgpuctl returned it, one dict per step, in order.
    - C(kind) is the text's first word (C(run), C(write), C(create), C(start), C(turn)) and
      C(text) the line a person reads.
    - C(step) says what the step does (C(mig-on), C(mig-off), C(vfs-on), C(vfs-off),
      C(gi-create), C(ci-destroy), C(gi-destroy), C(mixed-size-on), C(vgpu-create), C(write),
      C(vgpu-destroy), C(record-write), C(record-drop), C(domain-start)); C(gpu) the GPU's PCI
      address; C(object) what it changes (C(gpu), C(gpu-instance), C(vgpu), C(record),
      C(domain)); C(profile), C(parent), C(domain), C(path) (the program run or the file
      written), C(value) (what is written) and C(count) (GPU instances or vGPUs; 0 for all
      there are), null where a step has none.
  returned: success
  type: list
  elements: dict
  sample:
    - kind: write
      text: "write: 1151 > sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type"
      step: write
      gpu: "0000:c1:00.0"
      object: vgpu
      profile: L40S-8Q
      parent: "0000:c1:00.4"
      domain: null
      path: sys/bus/pci/devices/0000:c1:00.4/nvidia/current_vgpu_type
      value: "1151"
      count: 1
gpus:
  description: The GPUs the plan changes, by PCI address, in the order of the plan.
  returned: success
  type: list
  elements: str
  sample: ["0000:c1:00.0"]
cmd:
  description: The last vgpuctl command that ran, as its argv.
  returned: always
  type: list
  elements: str
  sample: [vgpuctl, apply, -f, /etc/vgpuctl/host.yaml, --config, l40s-8q]
rc:
  description: Exit status of that command.
  returned: always
  type: int
  sample: 0
stderr:
  description: vgpuctl's stderr (progress lines of a real run, warnings, the error).
  returned: always
  type: str
  sample: "vgpuctl: vGPUs: GPU 0000:c1:00.0: creating 2 of L40S-8Q"
'''

import json
import os

from ansible.module_utils.basic import AnsibleModule

# where meson installs vgpuctl (prefix /usr/local) and where a package puts it
SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']


def find_vgpuctl(module, name):
    """The binary: a path as given, a bare name in PATH and the sbin directories."""
    name = name or 'vgpuctl'
    if '/' not in name:
        return module.get_bin_path(name, required=True, opt_dirs=SBIN_DIRS)
    if not os.path.isfile(name) or not os.access(name, os.X_OK):
        module.fail_json(msg='vgpuctl: %s is not an executable file' % name)
    return name


def vgpuctl_errors(stderr):
    """vgpuctl's message: its `vgpuctl: apply: ...` lines on stderr, else every
    `vgpuctl: ...` line but the warnings (a real run's progress lines are
    `vgpuctl: STEP: ...`), else all of stderr."""
    lines = [ln.rstrip() for ln in (stderr or '').splitlines() if ln.strip()]
    errors = [ln for ln in lines
              if ln.startswith('vgpuctl:') and not ln.startswith('vgpuctl: warning:')]
    return [ln for ln in errors if ln.startswith('vgpuctl: apply:')] or errors or lines


def vgpuctl_warnings(stderr):
    return [ln.rstrip() for ln in (stderr or '').splitlines()
            if ln.startswith('vgpuctl: warning:')]


STEP_FIELDS = ('step', 'gpu', 'object', 'count')


def parse_plan(module, stdout, result):
    try:
        doc = json.loads(stdout)
    except ValueError as exc:
        module.fail_json(msg='vgpuctl apply --dry-run --json printed no JSON plan (%s); '
                             'this module needs a vgpuctl with a machine-readable plan' % exc,
                         stdout=stdout, **result)
    steps = doc.get('steps') if isinstance(doc, dict) else None
    if not isinstance(steps, list) or not all(isinstance(s, dict) and 'text' in s
                                              and all(k in s for k in STEP_FIELDS)
                                              for s in steps):
        module.fail_json(msg='vgpuctl apply --dry-run --json: the plan has no list of '
                             'steps with their kind, GPU, object and count; this module '
                             'needs a vgpuctl whose plan is data', stdout=stdout, **result)
    return steps


def what_changes(plan):
    """The plan by what it changes, not by its text: a vGPU's mdev UUID is new in each
    dry run, so two plans of the same changes differ in their texts and values."""
    return [(s['step'], s['gpu'], s['object'], s.get('profile'), s.get('parent'),
             s.get('domain'), s['count']) for s in plan]


def plan_gpus(plan):
    gpus = []
    for s in plan:
        if s['gpu'] and s['gpu'] not in gpus:
            gpus.append(s['gpu'])
    return gpus


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type='path', required=True),
            label=dict(type='str', required=True),
            sysroot=dict(type='path'),
            vgpuctl=dict(type='path'),
            connect=dict(type='str'),
            nvidia_smi=dict(type='path'),
            sriov_manage=dict(type='path'),
            nvml=dict(type='str'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    # vgpuctl's messages are English; keep them unchanged by the locale of the connection
    module.run_command_environ_update = dict(LANG='C', LC_ALL='C', LC_MESSAGES='C')

    binary = find_vgpuctl(module, p['vgpuctl'])
    argv = [binary]
    if p['connect'] is not None:
        argv += ['-c', p['connect']]
    if p['nvml'] is not None:
        argv += ['--nvml', p['nvml']]
    if p['sysroot'] is not None:
        argv += ['--sysroot', p['sysroot']]
    tail = ['-f', p['config'], '--config', p['label']]
    if p['nvidia_smi'] is not None:
        tail += ['--nvidia-smi', p['nvidia_smi']]
    if p['sriov_manage'] is not None:
        tail += ['--sriov-manage', p['sriov_manage']]
    dry_argv = argv + ['apply', '--dry-run', '--json'] + tail
    real_argv = argv + ['apply'] + tail

    warned = set()

    def run(cmd):
        rc, out, err = module.run_command(cmd)
        for w in vgpuctl_warnings(err):
            if w not in warned:
                warned.add(w)
                module.warn(w)
        return rc, out, err

    rc, out, err = run(dry_argv)
    result = dict(changed=False, cmd=dry_argv, rc=rc, stderr=err)
    if rc != 0:
        module.fail_json(msg='\n'.join(vgpuctl_errors(err))
                         or 'vgpuctl apply --dry-run exited %d' % rc, stdout=out, **result)
    plan = parse_plan(module, out, result)
    texts = [s['text'] for s in plan]
    result.update(steps=texts, plan=plan, gpus=plan_gpus(plan), changed=bool(plan))
    if module._diff:
        result['diff'] = dict(before='', after=''.join(t + '\n' for t in texts),
                              before_header='%s (now)' % p['label'],
                              after_header='%s (vgpuctl apply: planned steps)' % p['label'])

    if plan and not module.check_mode:
        rc, out, err = run(real_argv)
        result.update(cmd=real_argv, rc=rc, stderr=err)
        if rc != 0:
            # changed: whether the failed run left the host other than it was, as the
            # plan sees it (vgpuctl undoes the vGPUs it made; earlier steps stay)
            rc2, out2, dummy = module.run_command(dry_argv)
            try:
                after = json.loads(out2).get('steps') if rc2 == 0 else None
                after = what_changes(after)
            except (ValueError, AttributeError, KeyError, TypeError):
                after = None
            result['changed'] = after != what_changes(plan)
            module.fail_json(msg='\n'.join(vgpuctl_errors(err))
                             or 'vgpuctl apply exited %d' % rc, stdout=out, **result)

    module.exit_json(**result)


if __name__ == '__main__':
    main()
