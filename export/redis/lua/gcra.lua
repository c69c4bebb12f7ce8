-- gcra: emission interval T = 1/rate, tolerance tau = (burst-1)*T; a
-- request of cost n is admitted when TAT' - now <= tau + T (under 1 ns
-- over), TAT' = max(TAT, now) + n*T. ARGV[1] rate (requests/s), ARGV[2]
-- burst. KEYS[1] is a hash holding the theoretical arrival time as
-- a = TAT - t in ns (a double) and t = the time it was set (µs): an
-- offset keeps full precision where an absolute TAT in ns would not
-- (today's epoch in ns is beyond a double's 2^53).
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local T = 1e9 / rate
local perNs = rate / 1e9
local limit = burst * T
local key = KEYS[1]
local s = redis.call('HMGET', key, 'a', 't')
local ahead = 0 -- TAT - now in ns, at least 0
if s[1] then
  ahead = tonumber(s[1]) - (now - tonumber(s[2])) * 1000
  if ahead < 0 then ahead = 0 end
end
-- remaining: the largest k with ahead + k*T - (tau + T) under 1 ns.
local function remaining(ahead)
  local k = (limit - ahead + 1) * perNs
  if k <= 0 then k = 0 else k = math.floor(k) end
  if k > 0 and ahead + k * T - limit >= 1 then
    k = k - 1
  elseif k < burst and ahead + (k + 1) * T - limit < 1 then
    k = k + 1
  end
  return k
end
if cost <= 0 then return {1, remaining(ahead), 0, us(ceil_ns(ahead)), 0} end
if cost > burst then return {0, remaining(ahead), NEVER, us(ceil_ns(ahead)), 0} end
local nxt = ahead + cost * T
local wait = nxt - limit
if wait >= 1 then return {0, remaining(ahead), us(ceil_ns(wait)), us(ceil_ns(ahead)), 0} end
if not dry then
  redis.call('HSET', key, 'a', num(nxt), 't', num(now))
  keep({key}, ceil_ns(nxt) / 1000)
end
return {1, remaining(nxt), 0, us(ceil_ns(nxt)), 0}
