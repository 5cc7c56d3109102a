# deskhand's Ruby driver: runs blocks read from fd 3 in TOPLEVEL_BINDING
# (locals persist) and reports "MARKER STATUS" on fd 4 after each.
def __deskhand_driver
  $stdout.sync = true
  $stderr.sync = true
  blocks = IO.new(3, 'rb')
  ctl = IO.new(4, 'wb')
  blocks.close_on_exec = true
  ctl.close_on_exec = true
  ctl.sync = true
  pid = Process.pid
  running = false
  trap('INT') { raise Interrupt if running }
  n = 0
  loop do
    header = blocks.gets
    exit!(0) if header.nil?
    next if header == "\n" # deskhand's token: it looks whether we wait here
    marker, size = header.split(' ')
    size = size.to_i
    src = size > 0 ? blocks.read(size) : +''
    n += 1
    status = 0
    begin
      running = true
      TOPLEVEL_BINDING.eval(src.force_encoding(Encoding::UTF_8), "<block #{n}>", 1)
    rescue SystemExit => e
      status = e.status
    rescue Interrupt => e
      $stderr.puts(e.full_message(highlight: false))
      status = 130
    rescue Exception => e
      $stderr.puts(e.full_message(highlight: false))
      status = 1
    ensure
      running = false
    end
    $stdout.flush
    $stderr.flush
    exit!(status) if Process.pid != pid
    ctl.write("#{marker} #{status}\n")
  end
end
__deskhand_driver
