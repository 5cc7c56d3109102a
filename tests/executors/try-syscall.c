/*
 * try-syscall — makes the system calls named on its command line and
 * prints "NAME ERRNO" for each (ERRNO is the symbolic name, or "OK"), in
 * the spirit of bubblewrap's tests/try-syscall.c.
 *
 * Every call is made with arguments that make it fail harmlessly when the
 * kernel itself handles it (a bad pointer gives EFAULT, a bad descriptor
 * EBADF, impossible flags EINVAL), so that EPERM or ENOSYS can only come
 * from a seccomp filter — and so that running it outside any sandbox, even
 * as root, changes nothing on the machine. Never add a call whose "ordinary"
 * outcome does something.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#define WRONG_POINTER ((void *)1)

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static long try(const char *name)
{
	if (strcmp(name, "ptrace") == 0)
		return syscall(SYS_ptrace, -1L, 0, NULL, NULL);      /* bad request: EIO/ESRCH */
	if (strcmp(name, "process_vm_readv") == 0)
		return syscall(SYS_process_vm_readv, getpid(), WRONG_POINTER, 1, WRONG_POINTER, 1, 0);
	if (strcmp(name, "process_vm_writev") == 0)
		return syscall(SYS_process_vm_writev, getpid(), WRONG_POINTER, 1, WRONG_POINTER, 1, 0);
	if (strcmp(name, "mount") == 0)
		return syscall(SYS_mount, WRONG_POINTER, WRONG_POINTER, WRONG_POINTER, 0, NULL);
	if (strcmp(name, "umount2") == 0)
		return syscall(SYS_umount2, WRONG_POINTER, 0);
	if (strcmp(name, "pivot_root") == 0)
		return syscall(SYS_pivot_root, WRONG_POINTER, WRONG_POINTER);
	if (strcmp(name, "chroot") == 0)
		return syscall(SYS_chroot, WRONG_POINTER);
	if (strcmp(name, "open_tree") == 0)
		return syscall(SYS_open_tree, -1, WRONG_POINTER, 0);
	if (strcmp(name, "move_mount") == 0)
		return syscall(SYS_move_mount, -1, WRONG_POINTER, -1, WRONG_POINTER, 0);
	if (strcmp(name, "fsopen") == 0)
		return syscall(SYS_fsopen, WRONG_POINTER, 0);
	if (strcmp(name, "fsconfig") == 0)
		return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0);
	if (strcmp(name, "fsmount") == 0)
		return syscall(SYS_fsmount, -1, 0, 0);
	if (strcmp(name, "fspick") == 0)
		return syscall(SYS_fspick, -1, WRONG_POINTER, 0);
	if (strcmp(name, "mount_setattr") == 0)
		return syscall(SYS_mount_setattr, -1, WRONG_POINTER, 0, WRONG_POINTER, 0);
	if (strcmp(name, "unshare") == 0)
		return syscall(SYS_unshare, 0);                      /* a no-op when allowed */
	if (strcmp(name, "setns") == 0)
		return syscall(SYS_setns, -1, 0);
	/* CLONE_THREAD without CLONE_SIGHAND is rejected before anything else
	 * happens: EINVAL from the kernel, EPERM from the filter. */
	if (strcmp(name, "clone-newuser") == 0)
		return syscall(SYS_clone, CLONE_NEWUSER | CLONE_THREAD, NULL, NULL, NULL, 0);
	if (strcmp(name, "clone-newns") == 0)
		return syscall(SYS_clone, CLONE_NEWNS | CLONE_THREAD, NULL, NULL, NULL, 0);
	if (strcmp(name, "clone-newpid") == 0)
		return syscall(SYS_clone, CLONE_NEWPID | CLONE_THREAD, NULL, NULL, NULL, 0);
	if (strcmp(name, "clone-newnet") == 0)
		return syscall(SYS_clone, CLONE_NEWNET | CLONE_THREAD, NULL, NULL, NULL, 0);
	if (strcmp(name, "clone-plain") == 0)
		return syscall(SYS_clone, CLONE_THREAD, NULL, NULL, NULL, 0);
	if (strcmp(name, "clone3") == 0)
		return syscall(SYS_clone3, NULL, 0);                 /* size 0: EINVAL */
	if (strcmp(name, "io_uring_setup") == 0)
		return syscall(SYS_io_uring_setup, 0, WRONG_POINTER);
	if (strcmp(name, "io_uring_enter") == 0)
		return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0);
	if (strcmp(name, "io_uring_register") == 0)
		return syscall(SYS_io_uring_register, -1, 0, NULL, 0);
	if (strcmp(name, "bpf") == 0)
		return syscall(SYS_bpf, -1, NULL, 0);
	if (strcmp(name, "perf_event_open") == 0)
		return syscall(SYS_perf_event_open, WRONG_POINTER, 0, -1, -1, 0);
	if (strcmp(name, "keyctl") == 0)
		return syscall(SYS_keyctl, 0x7fff, 0, 0, 0, 0);
	if (strcmp(name, "add_key") == 0)
		return syscall(SYS_add_key, WRONG_POINTER, WRONG_POINTER, NULL, 0, 0);
	if (strcmp(name, "request_key") == 0)
		return syscall(SYS_request_key, WRONG_POINTER, WRONG_POINTER, NULL, 0);
	if (strcmp(name, "kexec_load") == 0)
		return syscall(SYS_kexec_load, 0, 0, NULL, 0x7fff0000UL);   /* bad arch */
	if (strcmp(name, "kexec_file_load") == 0)
		return syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0xffffffffUL);
	if (strcmp(name, "init_module") == 0)
		return syscall(SYS_init_module, WRONG_POINTER, 64, WRONG_POINTER);
	if (strcmp(name, "finit_module") == 0)
		return syscall(SYS_finit_module, -1, WRONG_POINTER, 0);
	if (strcmp(name, "delete_module") == 0)
		return syscall(SYS_delete_module, WRONG_POINTER, 0);
	if (strcmp(name, "userfaultfd") == 0)
		return syscall(SYS_userfaultfd, 0xffffffff);
	if (strcmp(name, "open_by_handle_at") == 0)
		return syscall(SYS_open_by_handle_at, -1, WRONG_POINTER, 0);
	if (strcmp(name, "reboot") == 0)
		return syscall(SYS_reboot, 0, 0, 0, NULL);           /* bad magic: EINVAL */
	if (strcmp(name, "swapon") == 0)
		return syscall(SYS_swapon, WRONG_POINTER, 0);
	if (strcmp(name, "swapoff") == 0)
		return syscall(SYS_swapoff, WRONG_POINTER);
	if (strcmp(name, "settimeofday") == 0)
		return syscall(SYS_settimeofday, WRONG_POINTER, NULL);
	if (strcmp(name, "clock_settime") == 0)
		return syscall(SYS_clock_settime, 0, WRONG_POINTER);
	if (strcmp(name, "clock_adjtime") == 0)
		return syscall(SYS_clock_adjtime, 0, WRONG_POINTER);
	if (strcmp(name, "adjtimex") == 0)
		return syscall(SYS_adjtimex, WRONG_POINTER);
	/* personality() changes only this short-lived process when allowed. */
	if (strcmp(name, "personality-linux32") == 0)
		return syscall(SYS_personality, PER_LINUX32);
	if (strcmp(name, "personality-norandom") == 0)
		return syscall(SYS_personality, PER_LINUX | ADDR_NO_RANDOMIZE);
	if (strcmp(name, "personality-query") == 0)
		return syscall(SYS_personality, 0xffffffffUL);
	if (strcmp(name, "personality-default") == 0)
		return syscall(SYS_personality, PER_LINUX);
	/* TIOCSTI on /dev/null: ENOTTY from the kernel, EPERM from the filter;
	 * with garbage in the upper 32 bits, which the kernel ignores. */
	if (strcmp(name, "ioctl-tiocsti") == 0)
		return syscall(SYS_ioctl, open("/dev/null", O_RDONLY), TIOCSTI, WRONG_POINTER);
	if (strcmp(name, "ioctl-tiocsti-high") == 0)
		return syscall(SYS_ioctl, open("/dev/null", O_RDONLY),
		               0x100000000UL | TIOCSTI, WRONG_POINTER);
	if (strcmp(name, "ioctl-tioclinux") == 0)
		return syscall(SYS_ioctl, open("/dev/null", O_RDONLY), TIOCLINUX, WRONG_POINTER);
	if (strcmp(name, "ioctl-tiocgwinsz") == 0) {
		struct winsize ws;
		return syscall(SYS_ioctl, open("/dev/null", O_RDONLY), TIOCGWINSZ, &ws);
	}
	if (strcmp(name, "open-missing") == 0)
		return syscall(SYS_openat, AT_FDCWD, "/nonexistent/deskhand-try-syscall", O_RDONLY);
	if (strcmp(name, "getpid") == 0)
		return syscall(SYS_getpid);
	if (strcmp(name, "setgroups") == 0)
		return syscall(SYS_setgroups, 1, WRONG_POINTER);     /* EFAULT, or EPERM */
	errno = 0;
	return -2;
}

int main(int argc, char **argv)
{
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		errno = 0;
		long r = try(argv[i]);
		if (r == -2 && errno == 0) {
			fprintf(stderr, "try-syscall: unknown call '%s'\n", argv[i]);
			rc = 2;
			continue;
		}
		const char *what = r >= 0 ? "OK" : strerrorname_np(errno);
		printf("%s %s\n", argv[i], what ? what : "?");
	}
	return rc;
}
