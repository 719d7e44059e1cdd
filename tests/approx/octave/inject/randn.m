function r = randn(varargin)
% Test harness stand-in for randn (rsvd.m's Gaussian test matrix): the injected matrix, after
% checking that the caller asks for its shape.
global MEKA_INJECT
r = MEKA_INJECT.omega;
if ~isequal([varargin{:}], size(r))
  error('harness: randn(%s) asked, injected %dx%d', num2str([varargin{:}]), size(r, 1), size(r, 2));
end
end
