# tty.bash - on_tty "INPUT LINES" COMMAND...: run COMMAND on a
# pseudo-terminal (script(1)), typing each line of INPUT LINES after a
# pause, for the programs that read a passphrase only from a terminal.
on_tty() {
	local lines=$1
	shift
	{
		sleep 1
		printf '%s\n' "$lines" | while IFS= read -r l; do printf '%s\n' "$l"; sleep 0.5; done
	} | script -qec "$*" /dev/null > /dev/null
}
