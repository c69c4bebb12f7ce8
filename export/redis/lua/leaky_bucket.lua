-- leaky_bucket (a queue): requests join a FIFO drained at exactly rate
-- requests/s and wait for their slot (the delay) unless queue requests
-- already wait; a request of cost n takes n slots and is admitted when its
-- last unit waits at most queue/rate (under 1 ns over). ARGV[1] rate
-- (requests/s), ARGV[2] queue. KEYS[1] is a hash: b = how long the drain
-- was busy after the last admission (ns, a double), t = its time (µs).
local rate, queue = tonumber(ARGV[1]), tonumber(ARGV[2])
local T = 1e9 / rate
local perNs = rate / 1e9
local maxWait = queue * T
local key = KEYS[1]
local s = redis.call('HMGET', key, 'b', 't')
local backlog = 0 -- how long the drain is busy from now, ns
if s[1] then
  backlog = tonumber(s[1]) - (now - tonumber(s[2])) * 1000
  if backlog < 0 then backlog = 0 end
end
-- remaining: how many cost-1 requests could still join.
local function remaining(backlog)
  local k = (maxWait - backlog + 1) * perNs
  if k <= 0 then k = 0 else k = math.floor(k) end
  k = k + 1
  if k > 0 and backlog + (k - 1) * T - maxWait >= 1 then
    k = k - 1
  elseif k <= queue and backlog + k * T - maxWait < 1 then
    k = k + 1
  end
  return k
end
if cost <= 0 then return {1, remaining(backlog), 0, us(ceil_ns(backlog)), 0} end
if cost > queue + 1 then return {0, remaining(backlog), NEVER, us(ceil_ns(backlog)), 0} end
local wait = backlog + (cost - 1) * T - maxWait
if wait >= 1 then return {0, remaining(backlog), us(ceil_ns(wait)), us(ceil_ns(backlog)), 0} end
local after = backlog + cost * T
if not dry then
  redis.call('HSET', key, 'b', num(after), 't', num(now))
  keep({key}, ceil_ns(after) / 1000)
end
-- The delay is rounded to the nearest ns, then up to whole µs.
local delay = 0
if backlog >= 0.5 then delay = math.floor(backlog + 0.5) end
return {1, remaining(after), 0, us(ceil_ns(after)), us(delay)}
