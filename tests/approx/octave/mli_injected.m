function mli_injected(infile, outfile)
% Mu Li's nys.m and rnys.m (github.com/mli/nystrom, the RNys authors' code; the MEKA paper's
% Nys/RNys baselines) on the Gaussian kernel matrix G of A, with injected landmark indices (their
% idx argument) and an injected Gaussian test matrix for rsvd.m (inject/randn.m). Saves their
% factors (G ~ U*D*U') and the relative errors.
global MEKA_INJECT
in = load(infile);
MEKA_INJECT = struct('omega', in.omega);
A = full(in.A);
G = exp(-sqdist(A, A) * double(in.gamma));
k = double(in.k); m = double(in.m); idx = double(in.idx(:)');
[U_nys, D_nys] = nys(G, k, m, idx);
[U_rnys, D_rnys] = rnys(G, k, m, idx, double(in.p), double(in.q));
err_nys = norm(G - U_nys * D_nys * U_nys', 'fro') / norm(G, 'fro');
err_rnys = norm(G - U_rnys * D_rnys * U_rnys', 'fro') / norm(G, 'fro');
save('-v7', outfile, 'U_nys', 'D_nys', 'U_rnys', 'D_rnys', 'err_nys', 'err_rnys');
end
