#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-2.0-or-later
# GNU General Public License version 2 or (at your option) any later version, which
# includes version 3, Ansible's (see https://www.gnu.org/licenses/gpl-3.0.txt).
# Ansible facts module: `vgpuctl inventory --json` as ansible_facts.vgpuctl.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: vgpuctl_facts
short_description: NVIDIA vGPU inventory of a KVM/libvirt host as facts
version_added: "1.0.0"
description:
  - Runs C(vgpuctl inventory --json) on the managed host and sets its document as
    C(ansible_facts.vgpuctl).
  - The document has C(schema_version) (1), C(host) (what was read, by which vgpuctl) and
    the lists C(gpus), C(vfs), C(types), C(gpu_instances), C(vgpus), C(reservations) and
    C(topology), with the rows and keys of the matching C(vgpuctl --json) listings; its JSON
    Schema is C(inventory.schema.json) in vgpuctl's data directory.
  - C(types) says what fits now; each row has C(gpu), C(profile), C(type_id),
    C(available), C(max_instances) and C(reason) (why none fits, when C(available) is 0),
    so a play can pick a host with room for a profile.
  - Changes nothing on the host.
options:
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
  nvml:
    description:
      - NVIDIA's management library to load (the global C(vgpuctl --nvml LIB)).
    type: str
attributes:
  check_mode:
    description: Only reads; runs the same in check mode.
    support: full
  diff_mode:
    description: Nothing to show.
    support: none
  facts:
    description: Sets C(ansible_facts.vgpuctl).
    support: full
  platform:
    description: Linux KVM/libvirt hosts with NVIDIA's vGPU Manager.
    support: full
    platforms: posix
notes:
  - The same document is available as a local fact, C(ansible_local.vgpuctl), by installing
    C(facts.d/vgpuctl.fact) as C(/etc/ansible/facts.d/vgpuctl.fact).
requirements:
  - vgpuctl with C(inventory --json) on the managed host
seealso:
  - module: vgpuctl_apply
author:
  - vgpuctl maintainers (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Read the vGPU inventory
  vgpuctl_facts:

- name: Hosts with room for an L40S-8Q
  ansible.builtin.debug:
    msg: >-
      {{ ansible_facts.vgpuctl.types
         | selectattr('profile', 'equalto', 'L40S-8Q')
         | selectattr('available', 'gt', 0) | list | length > 0 }}
'''

RETURN = r'''
ansible_facts:
  description: The facts set.
  returned: always
  type: complex
  contains:
    vgpuctl:
      description: The output of C(vgpuctl inventory --json).
      returned: always
      type: dict
      sample:
        schema_version: 1
        host:
          hostname: kvm-l40s-1
          sysroot: /
          vgpuctl_version: 0.1.0
          nvml: true
        gpus: []
        vfs: []
        types:
          - gpu: "0000:c1:00.0"
            profile: L40S-8Q
            type_id: 1151
            available: 4
            max_instances: 6
            reason: null
        gpu_instances: []
        vgpus: []
        reservations: []
        topology: []
'''

import json
import os

from ansible.module_utils.basic import AnsibleModule

SCHEMA_VERSION = 1
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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysroot=dict(type='path'),
            vgpuctl=dict(type='path'),
            nvml=dict(type='str'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    module.run_command_environ_update = dict(LANG='C', LC_ALL='C', LC_MESSAGES='C')

    argv = [find_vgpuctl(module, p['vgpuctl'])]
    if p['nvml'] is not None:
        argv += ['--nvml', p['nvml']]
    if p['sysroot'] is not None:
        argv += ['--sysroot', p['sysroot']]
    argv += ['inventory', '--json']

    rc, out, err = module.run_command(argv)
    lines = [ln.rstrip() for ln in err.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith('vgpuctl: warning:'):
            module.warn(ln)
    if rc != 0:
        msg = [ln for ln in lines
               if ln.startswith('vgpuctl:') and not ln.startswith('vgpuctl: warning:')]
        module.fail_json(msg='\n'.join(msg or lines) or 'vgpuctl inventory exited %d' % rc,
                         cmd=argv, rc=rc, stdout=out, stderr=err)
    try:
        doc = json.loads(out)
    except ValueError as exc:
        module.fail_json(msg='vgpuctl inventory --json printed no JSON (%s)' % exc,
                         cmd=argv, rc=rc, stdout=out, stderr=err)
    if not isinstance(doc, dict):
        module.fail_json(msg='vgpuctl inventory --json printed no JSON object',
                         cmd=argv, rc=rc, stdout=out, stderr=err)
    if doc.get('schema_version') != SCHEMA_VERSION:
        module.warn('vgpuctl inventory: schema_version %r, this module knows %d'
                    % (doc.get('schema_version'), SCHEMA_VERSION))
    module.exit_json(changed=False, ansible_facts=dict(vgpuctl=doc))


if __name__ == '__main__':
    main()
