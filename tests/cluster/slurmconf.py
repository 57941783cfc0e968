"""slurm.conf and gres.conf of the tests' private Slurm (slurm.py), every path in one folder.

    slurmconf.write(folder, ["vm"], ["127.0.0.1"], cpus=8, gpus=2, partition="debug",
                    ports=(6817, 6818), munge_socket=folder / "munge" / "munge.socket")

Why each unusual line: daemons run as root (``SlurmUser``) with ``proctrack/linuxproc`` and
``task/none``, so neither cgroups nor a systemd are needed; ``AuthInfo=socket=`` points munge's
clients (daemons and commands alike) at the private munged; ``SlurmdParameters=config_overrides``
lets a node declare more CPUs than the machine has (a 2-core machine hosts a room of 20
servers: they then share its cores); GPUs are stand-ins, plain files (slurmd counts a GPU only
when it has a ``File``), so jobs that ask for GPUs are scheduled; ``KillWait=5`` makes scancel
quick; ``MinJobAge=600`` keeps ended jobs visible to ``scontrol show job`` for the tests.
"""
from pathlib import Path


def write(folder, names, addrs, cpus, gpus, partition, ports, munge_socket):
    """Write FOLDER/slurm.conf and FOLDER/gres.conf; returns the path of slurm.conf."""
    d = Path(folder)
    for i in range(gpus):
        (d / f"gpu{i}").touch()
    gres = f" Gres=gpu:{gpus}" if gpus else ""
    nodes = "".join(f"NodeName={n} NodeAddr={a} CPUs={cpus} RealMemory=16000{gres} "
                    f"State=UNKNOWN\n" for n, a in zip(names, addrs))
    conf = d / "slurm.conf"
    conf.write_text(f"""\
ClusterName=dlhack
SlurmctldHost={names[0]}({addrs[0]})
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={d / 'state'}
SlurmdSpoolDir={d / 'spool'}/%n
SlurmctldPidFile={d / 'slurmctld.pid'}
SlurmdPidFile={d / 'slurmd'}-%n.pid
SlurmctldLogFile={d / 'log' / 'slurmctld.log'}
SlurmdLogFile={d / 'log'}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=600
GresTypes=gpu
{nodes}PartitionName={partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
    (d / "gres.conf").write_text("AutoDetect=off\n" + "".join(
        f"NodeName={n} Name=gpu File={d}/gpu[0-{gpus - 1}]\n" for n in names) if gpus else "")
    return conf
