-- token_bucket: a bucket of burst tokens, full at first, refilled
-- continuously at rate tokens/s; a request of cost n takes n tokens when
-- its wait for missing tokens is under 1 ns. ARGV[1] rate (tokens/s),
-- ARGV[2] burst. KEYS[1] is a hash: d = tokens missing from a full bucket
-- after the last admission (a double), t = its time (µs).
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local perNs, nsPer = rate / 1e9, 1e9 / rate
local key = KEYS[1]
local s = redis.call('HMGET', key, 'd', 't')
local deficit, last = 0, now
if s[1] then deficit, last = tonumber(s[1]), tonumber(s[2]) end
local lag = 0
if now < last then lag, now = (last - now) * 1000, last end
local d = deficit
if now > last then
  d = deficit - (now - last) * 1000 * perNs
  if d < 0 then d = 0 end
end
-- remaining: the largest k whose wait (d + k - burst)/rate is under 1 ns.
local function remaining(d)
  local k = burst - d + perNs
  if k <= 0 then k = 0 else k = math.floor(k) end
  if k > 0 and (d + k - burst) * nsPer >= 1 then
    k = k - 1
  elseif k < burst and (d + (k + 1) - burst) * nsPer < 1 then
    k = k + 1
  end
  return k
end
local reset = lag + ceil_ns(d * nsPer)
if cost <= 0 then return {1, remaining(d), 0, us(reset), 0} end
if cost > burst then return {0, remaining(d), NEVER, us(reset), 0} end
local after = d + cost
local wait = (after - burst) * nsPer
if wait >= 1 then return {0, remaining(d), us(lag + ceil_ns(wait)), us(reset), 0} end
reset = lag + ceil_ns(after * nsPer)
if not dry then
  redis.call('HSET', key, 'd', num(after), 't', num(now))
  keep({key}, reset / 1000)
end
return {1, remaining(after), 0, us(reset), 0}
