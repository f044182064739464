package proc

import "syscall"

// sysProcAttr puts the child in its own process group, so that one kill(-pgid)
// reaches everything it forks and a terminal's Ctrl-C reaches only us (we then
// stop it in order), and asks the kernel to SIGKILL it if svcbench dies
// without cleaning up (for instance on SIGKILL). taskset keeps the death
// signal across its exec. The signal fires when the forking OS thread exits;
// the Go runtime only retires threads whose goroutine exits while locked
// with runtime.LockOSThread, which nothing in svcbench does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return nil // never kill(0) or kill(-1)
	}
	return syscall.Kill(-pgid, sig)
}
